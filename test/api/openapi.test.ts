// The OpenAPI 3.1 document: valid as a document, served as written, and every route's real
// responses (successes and errors) validate against it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { OpenApiChecker } from '../helpers/openapi.ts';
import { apiRouters, routeTable } from '../../api/app.ts';

let t: TestApi;
let doc: Record<string, unknown>;
let checker: OpenApiChecker;

beforeAll(async () => {
  t = await startTestApi();
  doc = (await t.get('/openapi.json')).json as Record<string, unknown>;
  checker = new OpenApiChecker(doc);
}, 240_000);

afterAll(async () => {
  await t?.close();
});

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc['openapi']).toBe('3.1.0');
  });

  it('names every operation with an id of its own, and describes every tag it uses', () => {
    const ids: string[] = [];
    const used = new Set<string>();
    for (const ops of Object.values(doc['paths'] as Record<string, Record<string, { operationId?: string; tags?: string[] }>>)) {
      for (const op of Object.values(ops)) {
        expect(op.operationId).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
        ids.push(op.operationId!);
        for (const tag of op.tags ?? []) used.add(tag);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain('getTelemetryMetricsByStreamId');
    const tags = doc['tags'] as { name: string; description?: string }[];
    for (const tag of used) expect(tags.find((t) => t.name === tag)?.description, tag).toBeTruthy();
  });

  it('documents exactly the routes the routers hold, and which of them need no token', () => {
    const routes = routeTable(apiRouters(t.api.deps));
    const asDoc = (p: string) => p.replace(/:(\w+)/g, '{$1}');
    const documented: string[] = [];
    const open: string[] = [];
    for (const [p, ops] of Object.entries(doc['paths'] as Record<string, Record<string, { security?: unknown[] }>>)) {
      for (const [m, op] of Object.entries(ops)) {
        documented.push(`${m.toUpperCase()} ${p}`);
        if (Array.isArray(op.security) && op.security.length === 0) open.push(`${m.toUpperCase()} ${p}`);
      }
    }
    expect(routes.map((r) => `${r.method} ${asDoc(r.path)}`).sort()).toEqual(documented.sort());
    expect(routes.filter((r) => r.access === 'public').map((r) => `${r.method} ${asDoc(r.path)}`).sort()).toEqual(open.sort());
  });

  it('describes every real response of every route', async () => {
    const a = t.tokens.acme;
    const op = t.tokens.operator;
    const requests: [string, string | null, Record<string, string>?][] = [
      ['/healthz', null],
      ['/readyz', null],
      ['/openapi.json', null],
      ['/telemetry/streams', a],
      ['/telemetry/streams?detail=1&window=all', a],
      ['/telemetry/streams?detail=true&window=1h', op],
      ['/telemetry/streams?window=nope', a],
      ['/telemetry/streams', null],
      ['/telemetry/streams', t.tokens.expired],
      ['/telemetry/metrics', op],
      ['/telemetry/metrics?window=all', op],
      ['/telemetry/metrics', a],
      ['/telemetry/metrics?window=x', op],
      ['/telemetry/metrics', null],
      ['/telemetry/metrics/acme:live-main', a],
      ['/telemetry/metrics/acme:live-sports?window=1h', a],
      ['/telemetry/metrics/globex:live-main', a],
      ['/telemetry/metrics/acme:nope', a],
      ['/telemetry/metrics/acme:live-main?window=x', a],
      ['/telemetry/metrics/acme:live-main', t.tokens.forged],
      ['/telemetry/metrics/acme:live-main?filter=device:mobile&filter=!region:', a],
      ['/telemetry/metrics/acme:live-main?filter=colour:red', a],
      ['/telemetry/breakdown?by=device', a],
      ['/telemetry/breakdown?by=region&window=all&streamId=acme:live-main&filter=!device:tv', a],
      ['/telemetry/breakdown?by=cohort&window=7d', op],
      ['/telemetry/breakdown?by=colour', a],
      ['/telemetry/breakdown', a],
      ['/telemetry/breakdown?by=device&filter=!', a],
      ['/telemetry/breakdown?by=device&streamId=globex:live-main', a],
      ['/telemetry/breakdown?by=device&streamId=acme:nope', a],
      ['/telemetry/breakdown?by=device', null],
      ['/telemetry/summary', a],
      ['/telemetry/summary?window=all&filter=!device:tv', a],
      ['/telemetry/summary?customerId=acme&window=7d', op],
      ['/telemetry/summary?window=90d', a],
      ['/telemetry/summary?customerId=globex', a],
      ['/telemetry/summary?customerId=nobody', op],
      ['/telemetry/summary', null],
      ['/telemetry/timeseries?streamId=acme:live-main', a],
      ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=900&window=7d', a],
      ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=60&window=30d', a],
      ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=5', a],
      ['/telemetry/timeseries', a],
      ['/telemetry/timeseries?streamId=acme:nope', a],
      ['/telemetry/timeseries?streamId=acme:live-main', null],
      ['/telemetry/export?streamId=acme:live-main&window=1h', a],
      ['/telemetry/export?streamId=acme:live-main&window=1h&format=ndjson', a],
      ['/telemetry/export?streamId=acme:live-main&window=1h&format=parquet', a],
      ['/telemetry/export?streamId=acme:live-main&window=1h&format=arrow', a],
      ['/telemetry/export?streamId=acme:live-main&format=pdf', a],
      ['/telemetry/export', a],
      ['/telemetry/export?streamId=acme:nope', a],
      ['/telemetry/export?streamId=acme:live-main', null],
      ['/control/reports/pilot/acme:live-main', a],
      ['/control/reports/pilot/acme:live-main?format=md&bucketSeconds=3600', a],
      ['/control/reports/pilot/acme%3Alive-main?format=markdown', op],
      ['/control/reports/pilot/acme:live-main?format=html', a],
      ['/control/reports/pilot/acme:live-main?format=jws', a],
      ['/control/reports/pilot/globex:live-main?format=jws', a],
      ['/.well-known/jwks.json', null],
      ['/control/reports/pilot/acme:live-main?format=pdf', a],
      ['/control/reports/pilot/acme:live-main?bucketSeconds=86400', a],
      ['/control/reports/pilot/globex:live-main', a],
      ['/control/reports/pilot/acme:nope', a],
      ['/control/reports/pilot/acme:live-main', null],
      ['/billing/summary', a],
      ['/billing/summary', op],
      ['/billing/summary', null],
      ['/billing/invoices', a],
      ['/billing/invoices', op],
      ['/billing/invoices', null],
      ['/billing/invoices/inv_1', a],
      ['/billing/invoices/inv_1', op],
      ['/billing/invoices/inv_1', null],
      ['/billing/customers/acme', a],
      ['/billing/customers/acme', op],
      ['/billing/customers/acme', null],
      ['/billing/usage/acme', a],
      ['/billing/usage/acme', op],
      ['/billing/usage/acme', null],
      ['/control/tenants', a],
      ['/control/tenants', op],
      ['/control/tenants', null],
      ['/control/tenants/acme', a],
      ['/control/tenants/acme', op],
      ['/control/tenants/acme', null],
      ['/metrics', a],
      ['/metrics', op],
      ['/metrics', null],
    ];
    for (const [path, token] of requests) {
      const res = await t.get(path, token);
      checker.check('GET', path, res);
      const etag = res.headers.get('etag');
      if (res.status === 200 && etag) {
        const again = await t.get(path, token, { 'If-None-Match': etag });
        expect(again.status).toBe(304);
        checker.check('GET', path, again);
      }
    }

    const acmeId = t.tenants['acme']!.id;
    const json = { 'Content-Type': 'application/json' };
    const writes: [string, string, { token?: string | null; headers?: Record<string, string>; body?: string }][] = [
      ['GET', `/control/tenants/${acmeId}/origins`, { token: a }],
      ['GET', '/control/tenants/acme/origins', { token: op }],
      ['GET', '/control/tenants/globex/origins', { token: a }],
      ['GET', '/control/tenants/nobody/origins', { token: op }],
      ['GET', '/control/tenants/acme/origins', { token: null }],
      ['PUT', '/control/tenants/acme/origins', { token: a, headers: json, body: '{"origins":["https://cdn.acme.test/live"]}' }],
      ['PUT', '/control/tenants/acme/origins', { token: a, headers: json, body: '{"origins":["ftp://x", 3]}' }],
      ['PUT', '/control/tenants/acme/origins', { token: a, headers: json, body: '{"origins":' }],
      ['PUT', '/control/tenants/acme/origins', { token: a, headers: { 'Content-Type': 'text/plain' }, body: '{}' }],
      ['PUT', '/control/tenants/acme/origins', { token: a, headers: json, body: JSON.stringify({ origins: ['x'.repeat(70_000)] }) }],
      ['PUT', '/control/tenants/acme/origins', { token: a, headers: { ...json, 'If-Match': '"t_0.0"' }, body: '{"origins":[]}' }],
      ['PUT', '/control/tenants/globex/origins', { token: a, headers: json, body: '{"origins":[]}' }],
      ['PUT', '/control/tenants/nobody/origins', { token: op, headers: json, body: '{"origins":[]}' }],
      ['PUT', '/control/tenants/acme/origins', { token: null, headers: json, body: '{"origins":[]}' }],
      ['GET', '/manifest/public-key', { token: null }],
      ['POST', '/manifest/sign', { token: a, headers: json, body: '{"url":"https://cdn.acme.test/live/a.m3u8"}' }],
      ['POST', '/manifest/sign', { token: a, headers: json, body: '{"url":"https://elsewhere.test/a.m3u8"}' }],
      ['POST', '/manifest/sign', { token: a, headers: json, body: '{"url":"ftp://x"}' }],
      ['POST', '/manifest/sign', { token: a, headers: { 'Content-Type': 'text/plain' }, body: '{}' }],
      ['POST', '/manifest/sign', { token: a, headers: json, body: JSON.stringify({ url: `https://cdn.acme.test/${'x'.repeat(70_000)}` }) }],
      ['POST', '/manifest/sign', { token: null, headers: json, body: '{}' }],
    ];
    for (const [method, path, init] of writes) {
      const res = await t.request(method, path, init);
      checker.check(method, path, res);
    }
    await exerciseAlertRoutes(a, op);
    expect(checker.missing()).toEqual([]);
  });
});

/** Every alert and webhook route, with ids made as it goes (private targets are refused by default). */
async function exerciseAlertRoutes(a: string, op: string): Promise<void> {
  const json = { 'Content-Type': 'application/json' };
  const call = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await t.request(method, path, { token, headers: json, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    checker.check(method, path, res);
    return res;
  };
  const rule = { name: 'r', metric: 'rebufferRatio', window: '5m', condition: 'above', threshold: 0.1 };
  const created = await call('POST', '/control/alerts', a, rule);
  const id = (created.json as { id: string }).id;
  await call('POST', '/control/alerts', a, { ...rule, window: '2h' });
  await call('POST', '/control/alerts', op, rule);
  await call('GET', '/control/alerts', a);
  await call('GET', `/control/alerts/${id}`, a);
  await call('GET', '/control/alerts/alr_nope1234567', a);
  await call('PATCH', `/control/alerts/${id}`, a, { threshold: 0.2 });
  await call('GET', `/control/alerts/${id}/incidents`, a);
  await call('GET', '/control/incidents?state=open', a);
  await call('GET', '/control/incidents?state=x', a);
  await call('DELETE', `/control/alerts/${id}`, a);
  await call('POST', '/control/webhooks', a, { url: 'http://127.0.0.1:9/hook' });
  const hook = await call('POST', '/control/webhooks', a, { url: 'https://203.0.113.10/hook', events: ['incident.opened'] });
  const hid = (hook.json as { id: string }).id;
  await call('GET', '/control/webhooks', a);
  await call('POST', `/control/webhooks/${hid}/rotate`, a);
  const ping = await call('POST', `/control/webhooks/${hid}/test`, a);
  await call('GET', `/control/webhooks/${hid}/deliveries`, a);
  await call('POST', `/control/webhooks/${hid}/deliveries/${(ping.json as { deliveryId: string }).deliveryId}/redeliver`, a);
  await call('POST', `/control/webhooks/${hid}/deliveries/dlv_none/redeliver`, a);
  await call('DELETE', `/control/webhooks/${hid}`, a);
}
