// Outbound safety of webhook deliveries and the outbox's durability: targets on loopback,
// metadata, private addresses or names resolving to them refused (at delivery too, on the address
// connected to), a redirect never followed, a slow receiver holding up only its own endpoint, and
// a pending delivery sent by a new outbox (a restart) with the same webhook-id, once.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { tempDir } from '../helpers/warehouse.ts';
import { silentLogger } from '../../lib/log.ts';
import { warehouseLayout, type WarehouseLayout } from '../../warehouse/layout.ts';
import { allowedAddresses, forbiddenAddress, TargetForbidden } from '../../alerts/webhooks/target-check.ts';
import { sendOnce } from '../../alerts/webhooks/send.ts';
import { addEndpoint } from '../../alerts/webhooks/endpoints-store.ts';
import { WebhookOutbox } from '../../alerts/webhooks/outbox.ts';
import { retryDelayMs } from '../../alerts/webhooks/delivery-record.ts';

let root: string;
let layout: WarehouseLayout;
const receivers: Receiver[] = [];

beforeAll(async () => {
  root = await tempDir();
  layout = warehouseLayout(root);
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await fs.rm(root, { recursive: true, force: true });
});

const receiver = async (port = 0) => {
  const r = await startReceiver(port);
  receivers.push(r);
  return r;
};
const opts = (allowPrivate: boolean) => ({ timeoutMs: 2_000, allowPrivate, retryForMs: 86_400_000 });

describe('SSRF', () => {
  it('refuses loopback, metadata, private, link-local and mapped addresses, and names that resolve to them', async () => {
    for (const a of ['127.0.0.1', '169.254.169.254', '10.1.2.3', '172.16.0.1', '192.168.1.1', '0.0.0.0', '::1', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '100.64.0.1']) {
      expect(forbiddenAddress(a), a).toBe(true);
    }
    expect(forbiddenAddress('203.0.113.10')).toBe(false);
    for (const url of ['http://127.0.0.1/x', 'http://169.254.169.254/latest/meta-data', 'http://localhost:8080/', 'http://[::1]/x']) {
      await expect(allowedAddresses(new URL(url), false), url).rejects.toBeInstanceOf(TargetForbidden);
    }
    expect((await allowedAddresses(new URL('http://localhost/'), true)).length).toBeGreaterThan(0);
  });

  it('re-checks at delivery: nothing is sent to a private address, and a redirect to one is not followed', async () => {
    const rx = await receiver();
    const refused = await sendOnce({ url: `${rx.url}/x`, headers: {}, body: '{}' }, opts(false));
    expect(refused.status).toBeNull();
    expect(refused.error).toMatch(/forbidden target/);
    expect(rx.received).toHaveLength(0);
    rx.answer.status = 302;
    rx.answer.headers = { Location: 'http://169.254.169.254/latest/meta-data' };
    const redirected = await sendOnce({ url: `${rx.url}/x`, headers: {}, body: '{}' }, opts(true));
    expect(redirected).toMatchObject({ status: 302, error: 'answered 302' });
    expect(rx.received).toHaveLength(1);
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const rx = await receiver();
    rx.answer.delayMs = 5_000;
    const a = await sendOnce({ url: rx.url, headers: {}, body: '{}' }, { ...opts(true), timeoutMs: 300 });
    expect(a.status).toBeNull();
    expect(a.durationMs).toBeLessThan(2_000);
  });
});

describe('the outbox', () => {
  it('backs off exponentially with jitter, at least what Retry-After asks', () => {
    expect(retryDelayMs(1, null, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(4, null, () => 0.5)).toBe(40_000);
    expect(retryDelayMs(30, null, () => 0.5)).toBe(3_600_000);
    expect(retryDelayMs(1, 120, () => 0)).toBe(120_000);
    expect(retryDelayMs(2, null, () => 0)).toBe(8_000);
  });

  it('delivers after a restart what was pending, with the same webhook-id, once; a slow endpoint delays only itself', async () => {
    const down = await receiver();
    const port = Number(new URL(down.url).port);
    await down.close();
    receivers.splice(receivers.indexOf(down), 1);
    const e = await addEndpoint(layout, 't_X', { url: `http://127.0.0.1:${port}/hook`, events: ['ping'] }, 10);
    const first = new WebhookOutbox(layout, opts(true), silentLogger);
    first.start();
    const d = await first.enqueue('t_X', e, { id: 'msg_restart', type: 'ping', timestamp: new Date().toISOString(), data: {} });
    await new Promise((r) => setTimeout(r, 700));
    await first.stop();
    expect((await first.list('t_X', e.id))[0]).toMatchObject({ id: d.id, state: 'pending' });

    const slow = await receiver();
    slow.answer.delayMs = 1_500;
    const slowEndpoint = await addEndpoint(layout, 't_Y', { url: slow.url, events: ['ping'] }, 10);
    const up = await receiver(port);
    const second = new WebhookOutbox(layout, opts(true), silentLogger);
    // What was pending waits for its next try: make it due now, as a restart long after would.
    await second.redeliver('t_X', e.id, d.id);
    await second.enqueue('t_Y', slowEndpoint, { id: 'msg_slow', type: 'ping', timestamp: new Date().toISOString(), data: {} });
    second.start();
    const [got] = await up.waitFor(1, 20_000);
    expect(got!.headers['webhook-id']).toBe('msg_restart');
    expect(slow.received.length === 0 || Date.now() - slow.received[0]!.at < 1_500).toBe(true);
    await slow.waitFor(1, 20_000);
    await new Promise((r) => setTimeout(r, 2_000));
    await second.stop();
    expect(up.received).toHaveLength(1);
    expect((await second.list('t_X', e.id))[0]).toMatchObject({ state: 'delivered' });
  }, 60_000);
});
