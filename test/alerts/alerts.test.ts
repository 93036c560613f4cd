// Alert rules and webhooks through the real API over a real snapshot: rules validated into
// problem+json, evaluated on the served snapshot with a value equal to independent SQL over the raw
// reports, incidents opened once per (rule, snapshot) and resolved on a later snapshot, delivered
// to a real receiver that verifies them with `standardwebhooks`, secrets rotated, deliveries
// listed and sent again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { expectSameFigure } from '../helpers/independent.ts';
import { silentLogger } from '../../lib/log.ts';
import { evaluateSnapshot } from '../../alerts/evaluate.ts';
import { enqueueAllEvents } from '../../alerts/notify.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { metricsText } from '../../lib/metrics.ts';

let t: TestApi;
let rx: Receiver;

beforeAll(async () => {
  t = await startTestApi({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } });
  rx = await startReceiver();
}, 240_000);

afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const post = (path: string, body: unknown, token = t.tokens.acme) =>
  t.request('POST', path, { token, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const evaluate = () => evaluateSnapshot({ db: t.api.deps.db, layout: t.api.deps.layout, log: silentLogger }, t.api.deps.store.current()!);

describe('alert rules', () => {
  it('refuses bad rules with a reason per field, and stores nothing', async () => {
    const bad = await post('/control/alerts', { name: '', metric: 'nope', window: '2h', condition: 'above', threshold: 'x', for: '10d', extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    const body = bad.json as { code: string; errors: { field: string; reason: string }[] };
    expect(body.code).toBe('invalid_alert_rule');
    expect(body.errors.map((e) => e.field).sort()).toEqual(['body', 'for', 'metric', 'name', 'threshold', 'window']);
    const hysteresis = await post('/control/alerts', { name: 'r', metric: 'rebufferRatio', window: '1h', condition: 'above', threshold: 0.1, recoveryThreshold: 0.2, filters: ['nope:x'] });
    expect((hysteresis.json as { errors: { field: string }[] }).errors.map((e) => e.field).sort()).toEqual(['filters.0', 'recoveryThreshold']);
    const foreign = await post('/control/alerts', { name: 'r', metric: 'rebufferRatio', streamId: 'globex:live-main', window: '1h', condition: 'above', threshold: 0.1 });
    expect(foreign.status).toBe(403);
    expect((await post('/control/alerts', { name: 'r', metric: 'activePeers', window: '1h', condition: 'below', threshold: 1, filters: ['device:tv'] })).status).toBe(400);
    expect((await post('/control/alerts', { name: 'r', metric: 'activePeers', window: '1h', condition: 'below', threshold: 1 }, t.tokens.operator)).json).toMatchObject({ code: 'customer_id_required' });
    expect(((await t.get('/control/alerts', t.tokens.acme)).json as { alerts: unknown[] }).alerts).toEqual([]);
  });

  it('creates, reads, changes, lists and deletes, scoped to the tenant (an operator acts with customerId)', async () => {
    const created = await post('/control/alerts', { name: 'tmp', metric: 'totalSessions', window: '1h', condition: 'below', threshold: 1 });
    expect(created.status).toBe(201);
    const rule = created.json as { id: string; state: string; minSessions: number; for: string };
    expect(rule).toMatchObject({ state: 'ok', minSessions: 1, for: '0s', customerId: 'acme' });
    expect((await t.get(`/control/alerts/${rule.id}`, t.tokens.globex)).status).toBe(404);
    expect((await t.get(`/control/alerts/${rule.id}?customerId=acme`, t.tokens.operator)).status).toBe(200);
    const patched = await t.request('PATCH', `/control/alerts/${rule.id}`, { token: t.tokens.acme, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'renamed', for: '30s' }) });
    expect(patched.json).toMatchObject({ name: 'renamed', for: '30s', metric: 'totalSessions' });
    expect((await t.request('DELETE', `/control/alerts/${rule.id}`, { token: t.tokens.acme })).status).toBe(204);
    expect((await t.get(`/control/alerts/${rule.id}`, t.tokens.acme)).status).toBe(404);
  });
});

describe('evaluation, incidents and webhooks', () => {
  let secret: string;
  let webhookId: string;
  const ruleIds: string[] = [];
  /**
   * The requests of one event type (verified with the first secret), once there are `n`: by type,
   * not by position, as a delivery may be sent again (at least once, with the same webhook-id: the
   * test of the first deliveries checks the ids) and sit among the others.
   */
  const ofType = (type: string, n: number) => rx.waitForMatching((r) => (rx.verify(r, secret) as { type: string }).type === type, n);

  it('registers an endpoint, its secret shown once', async () => {
    const r = await post('/control/webhooks', { url: `${rx.url}/hook` });
    expect(r.status).toBe(201);
    const w = r.json as { id: string; secret: string; events: string[] };
    expect(w.secret).toMatch(/^whsec_/);
    expect(w.events).toEqual(['incident.opened', 'incident.resolved', 'ping']);
    secret = w.secret;
    webhookId = w.id;
    const list = (await t.get('/control/webhooks', t.tokens.acme)).json as { webhooks: Record<string, unknown>[] };
    expect(list.webhooks).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain('whsec_');
  });

  it('opens an incident at the snapshot with the value independent SQL gives, once however often the snapshot is evaluated', async () => {
    const stream = await post('/control/alerts', { name: 'offload', metric: 'avgOffloadRatio', streamId: 'acme:live-main', window: '24h', condition: 'above', threshold: -1, recoveryThreshold: -2 });
    const filtered = await post('/control/alerts', { name: 'mobile rebuffer', metric: 'rebufferRatio', filters: ['device:mobile'], window: '1h', condition: 'below', threshold: 2 });
    const shared = await post('/control/alerts', { name: 'same question', metric: 'avgBufferHealth', filters: ['device:mobile'], window: '1h', condition: 'above', threshold: 1e12 });
    for (const r of [stream, filtered, shared]) ruleIds.push((r.json as { id: string }).id);
    const first = await evaluate();
    expect(first).toMatchObject({ rules: 3, questions: 2, opened: 2, resolved: 0, firing: 2 });
    const again = await evaluate();
    expect(again).toMatchObject({ opened: 0, resolved: 0, firing: 2 });

    const ind = await t.independent();
    const [s] = await ind.breakdown('24h', { by: null, streams: ['acme:live-main'] });
    const [f] = await ind.breakdown('1h', { by: null, streams: ['acme:'], filters: { device: { keep: ['mobile'], drop: [] } } });
    const open = ((await t.get('/control/incidents?state=open', t.tokens.acme)).json as { incidents: { ruleId: string; valueAtOpen: number; openedAt: string }[] }).incidents;
    expect(open).toHaveLength(2);
    expectSameFigure(open.find((i) => i.ruleId === ruleIds[0])!.valueAtOpen, s!['avgOffloadRatio'], 'offload at opening');
    expectSameFigure(open.find((i) => i.ruleId === ruleIds[1])!.valueAtOpen, f!['rebufferRatio'], 'filtered rebuffer at opening');
    expect(open[0]!.openedAt).toBe(AS_OF.toISOString());
    expect(((await t.get(`/control/alerts/${ruleIds[0]}`, t.tokens.acme)).json as { state: string }).state).toBe('firing');
    expect(((await t.get(`/control/alerts/${ruleIds[2]}/incidents`, t.tokens.acme)).json as { incidents: unknown[] }).incidents).toEqual([]);
    expect(((await t.get('/control/incidents?state=open', t.tokens.globex)).json as { incidents: unknown[] }).incidents).toEqual([]);
    expect(await metricsText()).toMatch(/p2ptel_alert_rules_firing 2/);
  });

  it('delivers each event signed (standardwebhooks verifies it), and never twice with different ids', async () => {
    expect(await enqueueAllEvents(t.api.deps.layout, t.api.deps.outbox)).toBe(2);
    expect(await enqueueAllEvents(t.api.deps.layout, t.api.deps.outbox)).toBe(0);
    const got = await rx.waitFor(2);
    for (const r of got) {
      const body = rx.verify(r, secret) as { type: string; data: { incident: { ruleId: string }; rule: { id: string } } };
      expect(body.type).toBe('incident.opened');
      expect(body.data.rule.id).toBe(body.data.incident.ruleId);
      expect(r.headers['webhook-id']).toMatch(/^msg_/);
    }
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(2);
  });

  it('retries a failing delivery with the same webhook-id, honouring Retry-After, and lists every attempt', async () => {
    rx.answer.status = 503;
    rx.answer.headers = { 'Retry-After': '1' };
    const ping = await t.request('POST', `/control/webhooks/${webhookId}/test`, { token: t.tokens.acme });
    expect(ping.status).toBe(202);
    await ofType('ping', 1);
    rx.answer.status = 200;
    rx.answer.headers = {};
    const got = await ofType('ping', 2);
    expect(got[1]!.headers['webhook-id']).toBe(got[0]!.headers['webhook-id']);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(950);
    await new Promise((r) => setTimeout(r, 200));
    const { deliveries } = (await t.get(`/control/webhooks/${webhookId}/deliveries`, t.tokens.acme)).json as { deliveries: { id: string; type: string; state: string; attempts: { status: number }[] }[] };
    const p = deliveries.find((d) => d.type === 'ping')!;
    expect(p.state).toBe('delivered');
    expect(p.attempts.map((a) => a.status)).toEqual([503, 200]);
    const again = await t.request('POST', `/control/webhooks/${webhookId}/deliveries/${p.id}/redeliver`, { token: t.tokens.acme });
    expect(again.status).toBe(202);
    const third = (await ofType('ping', 3))[2]!;
    expect(third.headers['webhook-id']).toBe(got[1]!.headers['webhook-id']);
  }, 60_000);

  it('signs with both secrets during a rotation', async () => {
    const r = await t.request('POST', `/control/webhooks/${webhookId}/rotate`, { token: t.tokens.acme });
    const fresh = (r.json as { secret: string }).secret;
    expect(fresh).not.toBe(secret);
    await t.request('POST', `/control/webhooks/${webhookId}/test`, { token: t.tokens.acme });
    const last = (await ofType('ping', 4))[3]!;
    expect(last.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    rx.verify(last, fresh);
    rx.verify(last, secret);
  });

  it('resolves the incident on a later snapshot where the value recovered, and tells the receiver', async () => {
    await t.request('PATCH', `/control/alerts/${ruleIds[1]}`, { token: t.tokens.acme, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ threshold: -1 }) });
    await runPipeline(t.wh, { asOf: new Date(AS_OF.getTime() + 60_000) });
    await t.api.deps.store.refresh();
    const e = await evaluate();
    expect(e).toMatchObject({ opened: 0, resolved: 1, firing: 1 });
    const list = ((await t.get(`/control/alerts/${ruleIds[1]}/incidents`, t.tokens.acme)).json as { incidents: { state: string; valueAtClose: number | null; resolvedAt: string }[] }).incidents;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ state: 'resolved', resolvedAt: new Date(AS_OF.getTime() + 60_000).toISOString() });
    expect(list[0]!.valueAtClose).not.toBeNull();
    await enqueueAllEvents(t.api.deps.layout, t.api.deps.outbox);
    expect(await ofType('incident.resolved', 1)).toHaveLength(1);
  });
});
