// Alerts on the worker tier with real parts: a Redis of this file's own (restarted in a test, and
// without persistence, so a restart loses every job), real worker child processes rolling up every
// second, the collector taking reports over HTTP, the API (WEBHOOK_DELIVERIES=queue) for rules,
// endpoints, deliveries and redeliveries, and a receiver verifying every delivery with
// `standardwebhooks`. Incidents are opened and resolved by posted reports; a worker is SIGKILLed
// between evaluation and delivery, the receiver is down for a while, Redis restarts. In each:
// every incident's events delivered, none twice with different webhook-ids, none lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { startTestCollector, sampleReport, type TestCollector } from '../helpers/collector.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { jobEnv, killAllWorkers, readyWorker, startWorker, uniquePrefix, type WorkerProcess } from '../helpers/jobs.ts';
import { startReceiver, type Receiver, type Received } from '../helpers/webhook-receiver.ts';
import { cli } from '../helpers/cli.ts';
import { apiConfig } from '../helpers/api.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { silentLogger } from '../../lib/log.ts';
import { readState } from '../../alerts/state-store.ts';

let redis: RedisServer;
let wh: TestWarehouse;
let col: TestCollector;
let api: RunningApi;
let rx: Receiver;
let env: Record<string, string>;
let worker: WorkerProcess;
let token: string;
let secret: string;
let webhookId: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

/** Post `n` reports of new sessions on `stream`: `offload` of each session's bytes came from peers. */
async function postReports(stream: string, n: number, offload: number, tag: string): Promise<void> {
  const now = new Date();
  const reports = Array.from({ length: n }, (_, i) => {
    const off = Math.round(1_000_000 * offload);
    const fb = 1_000_000 - off;
    return sampleReport(stream, now, i, { reportId: `rep-${tag}-${i}`, sessionId: `sess-${tag}-${i}`, viewerId: `v-${tag}-${i}`, bytesOffloaded: off, bytesFallback: fb, bytesByPath: { webrtc: off, http: fb } });
  });
  const r = await col.post(JSON.stringify(reports), { key: col.keys['acme']! });
  expect(r.status, r.text).toBeLessThan(300);
}

/** A rule that fires while the stream's offload is below 0.5 and recovers above 0.6. */
async function lowOffloadRule(stream: string): Promise<string> {
  const r = await call('POST', '/control/alerts', { name: `low offload ${stream}`, metric: 'avgOffloadRatio', streamId: stream, window: '1h', condition: 'below', threshold: 0.5, recoveryThreshold: 0.6 });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json.id as string;
}

interface Event {
  r: Received;
  id: string;
  type: string;
  incidentId: string | null;
  ruleId: string | null;
}

/** Every delivery received, verified with the endpoint's secret (throws on a bad signature). */
function events(): Event[] {
  return rx.received.map((r) => {
    const body = rx.verify(r, secret) as { type: string; data: { incident?: { id: string; ruleId: string } } };
    return { r, id: r.headers['webhook-id']!, type: body.type, incidentId: body.data.incident?.id ?? null, ruleId: body.data.incident?.ruleId ?? null };
  });
}

async function waitForEvent(pred: (e: Event) => boolean, what: string, timeoutMs = 45_000): Promise<Event> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const hit = events().find(pred);
    if (hit) return hit;
    if (Date.now() > until) throw new Error(`no ${what} within ${timeoutMs} ms; received ${JSON.stringify(events().map((e) => [e.type, e.ruleId]))}; worker: ${JSON.stringify(worker.logs.slice(-8))}`);
    await sleep(100);
  }
}

/** Every incident's events received, each (incident, type) under one webhook-id only. */
async function expectEveryIncidentDeliveredOnce(): Promise<void> {
  const tenant = col.tenants['acme']!;
  const incidents = (await readState(wh.layout, tenant.id)).incidents;
  const got = events();
  for (const inc of incidents) {
    for (const ev of inc.events) {
      const copies = got.filter((e) => e.incidentId === inc.id && e.type === ev.type);
      expect(copies.length, `${ev.type} of ${inc.id}`).toBeGreaterThanOrEqual(1);
      expect(new Set(copies.map((c) => c.id)), `${ev.type} of ${inc.id}`).toEqual(new Set([ev.id]));
    }
  }
  // Nothing received that is not an event of a recorded incident (or a ping).
  const known = new Set(incidents.flatMap((i) => i.events.map((e) => e.id)));
  expect(got.filter((e) => e.type !== 'ping' && !known.has(e.id))).toEqual([]);
}

beforeAll(async () => {
  redis = await startRedisServer();
  wh = await openTestWarehouse();
  col = await startTestCollector({ warehouse: wh, customers: ['acme'], env: { COLLECTOR_FLUSH_SECONDS: '0.5' } });
  rx = await startReceiver();
  env = {
    ...jobEnv(wh.root, uniquePrefix('alerts'), { WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', WEBHOOK_SWEEP_SECONDS: '1', WORKER_LOCK_DURATION_MS: '3000' }),
    REDIS_URL: redis.url,
  };
  api = await startApi(apiConfig(wh.root, { ...env, WEBHOOK_DELIVERIES: 'queue' }), silentLogger);
  token = await issueToken(await tokenSecret(wh.layout, null), { role: 'tenant', tenant: col.tenants['acme']! }, 3600);
  const w = await call('POST', '/control/webhooks', { url: `${rx.url}/hook` });
  expect(w.status).toBe(201);
  secret = w.json.secret;
  webhookId = w.json.id;
  worker = await readyWorker(env);
  expect((await cli(['schedule', '--rollup-every', '1s'], env)).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await killAllWorkers();
  await api?.close();
  await rx?.close();
  await col?.close();
  await redis?.stop();
});

describe('alerts on the worker tier', () => {
  let ruleA: string;

  it('opens and resolves an incident from reports posted through the collector; the worker that published evaluates and the queue delivers, signed', async () => {
    ruleA = await lowOffloadRule('acme:live-a');
    await postReports('acme:live-a', 4, 0.1, 'a-bad');
    const opened = await waitForEvent((e) => e.ruleId === ruleA && e.type === 'incident.opened', 'incident.opened');
    expect(worker.logs.some((l) => l.msg === 'alerts evaluated' && (l['opened'] as number) === 1)).toBe(true);
    await postReports('acme:live-a', 40, 1, 'a-good');
    const resolved = await waitForEvent((e) => e.ruleId === ruleA && e.type === 'incident.resolved', 'incident.resolved');
    expect(resolved.incidentId).toBe(opened.incidentId);
    const incs = await call('GET', `/control/alerts/${ruleA}/incidents`);
    expect(incs.json.incidents).toMatchObject([{ id: opened.incidentId, state: 'resolved' }]);
    expect(incs.json.incidents[0].valueAtOpen).toBeCloseTo(0.1, 6);

    // The deliveries as the API lists them (the queue's records), and one sent again by hand: same webhook-id.
    const list = await call('GET', `/control/webhooks/${webhookId}/deliveries`);
    const first = list.json.deliveries.find((d: { eventId: string }) => d.eventId === opened.id);
    expect(first).toMatchObject({ state: 'delivered', via: 'queue', type: 'incident.opened' });
    const before = rx.received.length;
    expect((await call('POST', `/control/webhooks/${webhookId}/deliveries/${first.id}/redeliver`)).status).toBe(202);
    await rx.waitFor(before + 1, 20_000);
    expect(rx.received[before]!.headers['webhook-id']).toBe(opened.id);
    await expectEveryIncidentDeliveredOnce();
  }, 90_000);

  it('a worker SIGKILLed between evaluation and delivery: the next worker delivers the incident, once, with its one id', async () => {
    const ruleB = await lowOffloadRule('acme:live-b');
    worker.child.kill('SIGTERM');
    await worker.exited;
    const doomed = startWorker(env, { fixture: 'worker-alerts-crash.ts' });
    await postReports('acme:live-b', 3, 0, 'b-bad');
    await doomed.waitForStdout('KILLED', 60_000);
    expect((await doomed.exited).signal).toBe('SIGKILL');
    // Evaluated and recorded, not delivered.
    const inc = (await readState(wh.layout, col.tenants['acme']!.id)).incidents.find((i) => i.ruleId === ruleB)!;
    expect(inc.events).toMatchObject([{ type: 'incident.opened', enqueued: false }]);
    expect(events().some((e) => e.ruleId === ruleB)).toBe(false);
    worker = await readyWorker(env);
    const opened = await waitForEvent((e) => e.ruleId === ruleB && e.type === 'incident.opened', 'the incident.opened of the killed worker');
    expect(opened.incidentId).toBe(inc.id);
    await sleep(2_000);
    await expectEveryIncidentDeliveredOnce();
  }, 120_000);

  it('a receiver down for a while, then up: the delivery is retried with the same id and arrives once', async () => {
    const ruleC = await lowOffloadRule('acme:live-c');
    const port = Number(new URL(rx.url).port);
    const kept = rx.received.splice(0);
    await rx.close();
    await postReports('acme:live-c', 3, 0, 'c-bad');
    // Wait until a try has failed (connection refused), then bring the receiver back on its port.
    const until = Date.now() + 45_000;
    let failed = false;
    while (!failed && Date.now() < until) {
      const list = await call('GET', `/control/webhooks/${webhookId}/deliveries`);
      failed = list.json.deliveries.some((d: { state: string; attempts: { status: number | null }[] }) => d.state === 'pending' && d.attempts.length > 0);
      if (!failed) await sleep(200);
    }
    expect(failed).toBe(true);
    rx = await startReceiver(port);
    rx.received.push(...kept);
    await waitForEvent((e) => e.ruleId === ruleC && e.type === 'incident.opened', 'the retried incident.opened');
    await expectEveryIncidentDeliveredOnce();
  }, 120_000);

  it('Redis restarted (its jobs lost) while a delivery waits for its retry: the sweep puts it back, it arrives once', async () => {
    const ruleD = await lowOffloadRule('acme:live-d');
    rx.answer.status = 503;
    await postReports('acme:live-d', 3, 0, 'd-bad');
    await waitForEvent((e) => e.ruleId === ruleD, 'the first try of the incident');
    await redis.restart();
    rx.answer.status = 204;
    const firstTry = events().filter((e) => e.ruleId === ruleD).length;
    const until = Date.now() + 60_000;
    let delivered = false;
    while (!delivered && Date.now() < until) {
      const list = await call('GET', `/control/webhooks/${webhookId}/deliveries`).catch(() => null);
      delivered = list?.json.deliveries.some((d: { state: string; type: string; eventId: string }) => d.state === 'delivered' && events().some((e) => e.ruleId === ruleD && e.id === d.eventId)) ?? false;
      if (!delivered) await sleep(250);
    }
    expect(delivered).toBe(true);
    expect(events().filter((e) => e.ruleId === ruleD).length).toBeGreaterThan(firstTry);
    await expectEveryIncidentDeliveredOnce();
  }, 120_000);
});
