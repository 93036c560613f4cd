// HTTP hygiene: freshness headers and 304s, private caching, request ids in headers and logs (one
// JSON line per request, no tokens), HEAD, and problem bodies free of internals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { capturedLog } from '../helpers/captured-log.ts';

const { log: captured, lines } = capturedLog();

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ log: captured });
}, 240_000);

afterAll(async () => {
  await t?.close();
});

describe('freshness and caching', () => {
  it('says how fresh every telemetry response is, and answers 304 to a matching If-None-Match', async () => {
    for (const path of [
      '/telemetry/streams?detail=1',
      '/telemetry/metrics/acme:live-main?window=1h',
      '/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=3600',
      '/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=1800',
      '/telemetry/export?streamId=acme:live-main&window=1h&format=ndjson',
    ]) {
      const r = await t.get(path, t.tokens.acme);
      expect(r.status).toBe(200);
      expect(r.headers.get('last-modified')).toBe(AS_OF.toUTCString());
      expect(r.headers.get('cache-control')).toBe('private, no-cache');
      const etag = r.headers.get('etag')!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      const again = await t.get(path, t.tokens.acme);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.text).toBe(r.text);
      for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const cond = await t.get(path, t.tokens.acme, { 'If-None-Match': inm });
        expect(cond.status, inm).toBe(304);
        expect(cond.text).toBe('');
        expect(cond.headers.get('etag')).toBe(etag);
      }
      const stale = await t.get(path, t.tokens.acme, { 'If-None-Match': '"stale"' });
      expect(stale.status).toBe(200);
    }
  });

  it('gives different representations different ETags, and no caching to errors', async () => {
    const a = await t.get('/telemetry/metrics/acme:live-main?window=1h', t.tokens.acme);
    const b = await t.get('/telemetry/metrics/acme:live-main?window=24h', t.tokens.acme);
    const c = await t.get('/telemetry/streams', t.tokens.globex);
    const d = await t.get('/telemetry/streams', t.tokens.acme);
    expect(new Set([a, b, c, d].map((r) => r.headers.get('etag'))).size).toBe(4);
    const err = await t.get('/telemetry/metrics/globex:x', t.tokens.acme);
    expect(err.headers.get('cache-control')).toBe('no-store');
    expect(err.headers.get('etag')).toBeNull();
  });

  it('answers HEAD like GET, without a body', async () => {
    const r = await t.request('HEAD', '/telemetry/streams', { token: t.tokens.acme });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers.get('etag')).toBeTruthy();
  });
});

describe('request ids and logs', () => {
  it('returns a request id, keeps a sane one from the client, and logs one JSON line per request without the token', async () => {
    const r = await t.get('/telemetry/streams', t.tokens.acme, { 'X-Request-Id': 'client-req-42' });
    expect(r.headers.get('x-request-id')).toBe('client-req-42');
    const generated = await t.get('/telemetry/streams', t.tokens.acme, { 'X-Request-Id': 'bad id with spaces / and more' });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const failing = await t.get('/telemetry/metrics/globex:x', t.tokens.acme);
    const failingId = failing.headers.get('x-request-id')!;
    await new Promise((res) => setTimeout(res, 50));
    const mine = lines.filter((l) => l['msg'] === 'request' && l['reqId'] === 'client-req-42');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ method: 'GET', path: '/telemetry/streams', status: 200, role: 'tenant', customerId: 'acme' });
    expect(typeof mine[0]!['ms']).toBe('number');
    expect(lines.find((l) => l['reqId'] === failingId)).toMatchObject({ status: 403 });
    expect(JSON.stringify(lines)).not.toContain(t.tokens.acme);
  });
});

describe('problem bodies', () => {
  it('are problem+json with type, title, status, detail and code, and nothing internal', async () => {
    const r = await t.get('/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=1', t.tokens.acme);
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(Object.keys(r.json as object).sort()).toEqual(['code', 'detail', 'maximum', 'minimum', 'parameter', 'status', 'title', 'type']);
  });

  it('answers 503 before any snapshot is published, and says so on /readyz', async () => {
    const { openTestWarehouse } = await import('../helpers/warehouse.ts');
    const { startApi } = await import('../../api/server.ts');
    const { apiConfig } = await import('../helpers/api.ts');
    const { silentLogger } = await import('../../lib/log.ts');
    const empty = await openTestWarehouse();
    const api = await startApi(apiConfig(empty.root), silentLogger);
    try {
      const ready = await fetch(`${api.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ code: 'snapshot_unavailable' });
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    } finally {
      await api.close();
      await empty.close();
    }
  });
});
