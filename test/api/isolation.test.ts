// Tenant isolation as a matrix: every route the API's routers hold (read from the routers
// themselves, so a new route cannot escape) × every caller {no token, malformed, forged, expired,
// tenant, operator}, and the stream routes × {another tenant's stream, %3A-encoded id, path tricks,
// quotes and SQL metacharacters, a 10 000-character id, missing and invalid query values}, with the
// expected status, and never another tenant's data in any body.
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi, type TestResponse } from '../helpers/api.ts';
import { apiRouters, routeTable } from '../../api/app.ts';

// Started at collection time: the matrix below is built from the running API's routers.
const t: TestApi = await startTestApi();
const ROUTES = routeTable(apiRouters(t.api.deps));

/** A concrete URL of a route template, naming `customer` (or its stream) in every parameter. */
function concrete(path: string, customer = 'acme'): string {
  return path.replace(':streamId', `${customer}:live-main`).replace(/:(id|customerId)\b/, customer);
}

/** A body each write route accepts, so that the matrix reaches its authorisation. */
const BODIES: Record<string, string> = {
  '/control/tenants/:id/origins': '{"origins":[]}',
  '/manifest/sign': '{"url":"https://cdn.acme.test/live/a.m3u8"}',
};
function call(method: string, path: string, token: string | null, customer = 'acme'): Promise<TestResponse> {
  const body = method === 'GET' ? undefined : BODIES[path] ?? '{}';
  return t.request(method, concrete(path, customer), { token, headers: body ? { 'Content-Type': 'application/json' } : {}, ...(body ? { body } : {}) });
}

afterAll(async () => {
  await t?.close();
});

/** A route template with `{id}` where a stream id goes (in the path or the query). */
interface Route {
  name: string;
  url: (id: string) => string;
}

const enc = encodeURIComponent;
const STREAM_ROUTES: Route[] = [
  { name: 'metrics', url: (id) => `/telemetry/metrics/${enc(id)}` },
  { name: 'metrics (raw colon)', url: (id) => `/telemetry/metrics/${enc(id).replace(/%3A/gi, ':')}` },
  { name: 'timeseries', url: (id) => `/telemetry/timeseries?streamId=${enc(id)}` },
  { name: 'export', url: (id) => `/telemetry/export?streamId=${enc(id)}` },
  { name: 'pilot report', url: (id) => `/control/reports/pilot/${enc(id)}` },
  { name: 'pilot report (html)', url: (id) => `/control/reports/pilot/${enc(id)}?format=html` },
  { name: 'pilot report (jws)', url: (id) => `/control/reports/pilot/${enc(id)}?format=jws` },
];

/** Nothing of globex's may show up in what acme gets. */
function expectNoForeignData(r: TestResponse): void {
  expect(r.text).not.toMatch(/globex/i);
}

function expectProblem(r: TestResponse, status: number, code?: string): void {
  expect(r.status, `${r.status} ${r.text.slice(0, 200)}`).toBe(status);
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  const p = r.json as Record<string, unknown>;
  expect(p).toMatchObject({ status, type: expect.stringMatching(/^urn:p2ptel:problem:/), title: expect.any(String), detail: expect.any(String) });
  if (code) expect(p['code']).toBe(code);
  expect(r.text).not.toMatch(/\bat .*\(.*:\d+:\d+\)|\/tmp\/|\.ts:\d+|SELECT |read_parquet/);
}

describe('every registered route × every caller', () => {
  it('the routers hold the routes rule 6 of the spec reserves for operators, on the operator router', () => {
    const operator = ROUTES.filter((r) => r.access === 'operator').map((r) => r.path);
    for (const path of ['/telemetry/metrics', '/billing/summary', '/billing/invoices', '/billing/invoices/:id', '/billing/customers/:customerId', '/billing/usage/:customerId', '/control/tenants', '/control/tenants/:id']) {
      expect(operator).toContain(path);
    }
    expect(ROUTES.filter((r) => r.access === 'public').map((r) => r.path).sort()).toEqual(['/.well-known/jwks.json', '/healthz', '/manifest/public-key', '/openapi.json', '/readyz']);
  });

  for (const route of ROUTES) {
    const name = `${route.method} ${route.path} (${route.access})`;
    if (route.access === 'public') {
      it(`${name}: answers without a token`, async () => {
        const r = await call(route.method, route.path, null);
        expect(r.status, r.text.slice(0, 200)).toBeLessThan(400);
      });
      continue;
    }
    it(`${name}: 401 without a token, or with a malformed, forged or expired one`, async () => {
      const none = await call(route.method, route.path, null);
      expectProblem(none, 401, 'missing_token');
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      for (const [token, why] of [
        [t.tokens.malformed, /malformed/],
        [t.tokens.forged, /signature/],
        [t.tokens.expired, /expired/],
      ] as const) {
        const r = await call(route.method, route.path, token);
        expectProblem(r, 401, 'invalid_token');
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
        expect(r.text).toMatch(why);
      }
      expectProblem(await t.request(route.method, concrete(route.path), { headers: { Authorization: 'Basic YWNtZTpzZWNyZXQ=' } }), 401, 'invalid_token');
    });
    if (route.access === 'operator') {
      it(`${name}: 403 for a tenant (naming itself or another), not for an operator`, async () => {
        for (const customer of ['acme', 'globex']) expectProblem(await call(route.method, route.path, t.tokens.acme, customer), 403, 'operator_only');
        const op = await call(route.method, route.path, t.tokens.operator);
        expect(op.status, op.text.slice(0, 200)).not.toBe(401);
        expect(op.status, op.text.slice(0, 200)).not.toBe(403);
      });
    } else {
      it(`${name}: a tenant gets past authentication, and sees nothing of another tenant`, async () => {
        const r = await call(route.method, route.path, t.tokens.acme);
        expect(r.status, r.text.slice(0, 200)).not.toBe(401);
        expect((r.json as { code?: string } | null)?.code).not.toBe('operator_only');
        expectNoForeignData(r);
      });
    }
  }
});

describe('tenant scoping of stream routes', () => {
  const cases: { id: string; status: number; code?: string; what: string }[] = [
    { id: 'acme:live-main', status: 200, what: 'own stream' },
    { id: 'globex:live-main', status: 403, code: 'forbidden_stream', what: "another tenant's stream" },
    { id: 'globex:does-not-exist', status: 403, code: 'forbidden_stream', what: "another tenant's prefix, unknown stream (403 tells nothing)" },
    { id: 'acme:never-reported', status: 404, code: 'stream_not_found', what: 'own prefix, never reported' },
    { id: 'acme', status: 403, code: 'forbidden_stream', what: 'no colon' },
    { id: 'acmeglobex:live-main', status: 403, code: 'forbidden_stream', what: 'prefix of a longer customer id' },
    { id: 'acme:../globex:live-main', status: 404, code: 'stream_not_found', what: 'dot-dot in the name' },
    { id: '../globex:live-main', status: 403, code: 'forbidden_stream', what: 'dot-dot before the customer' },
    { id: 'acme:..%2Fglobex:live-main', status: 404, code: 'stream_not_found', what: 'encoded slash' },
    { id: "acme:x' OR '1'='1", status: 404, code: 'stream_not_found', what: 'quotes' },
    { id: "globex:x'; DROP TABLE reports; --", status: 403, code: 'forbidden_stream', what: 'SQL in a foreign id' },
    { id: 'acme:live-main"; --', status: 404, code: 'stream_not_found', what: 'double quote' },
    { id: `acme:${'x'.repeat(10_000)}`, status: 404, code: 'stream_not_found', what: '10 000 characters' },
    { id: 'ACME:live-main', status: 403, code: 'forbidden_stream', what: 'case changed' },
    { id: ' acme:live-main', status: 403, code: 'forbidden_stream', what: 'leading space' },
  ];
  for (const route of STREAM_ROUTES) {
    for (const c of cases) {
      it(`${route.name}: ${c.what} → ${c.status}`, async () => {
        const r = await t.get(route.url(c.id), t.tokens.acme);
        if (c.status === 200) {
          expect(r.status, r.text.slice(0, 200)).toBe(200);
        } else {
          expectProblem(r, c.status, c.code);
        }
        expectNoForeignData(r);
      });
    }
  }

  it('the %3A-encoded and the raw colon name the same stream', async () => {
    const raw = await t.get('/telemetry/metrics/acme:live-main?window=1h', t.tokens.acme);
    const encoded = await t.get('/telemetry/metrics/acme%3Alive-main?window=1h', t.tokens.acme);
    const lower = await t.get('/telemetry/metrics/acme%3alive-main?window=1h', t.tokens.acme);
    expect(raw.status).toBe(200);
    expect(encoded.text).toBe(raw.text);
    expect(lower.text).toBe(raw.text);
  });

  it('an operator may read any stream', async () => {
    for (const route of STREAM_ROUTES) {
      const r = await t.get(route.url('globex:live-main'), t.tokens.operator);
      expect(r.status, route.name).toBe(200);
    }
  });

  it('lists only the caller\'s streams', async () => {
    for (const [token, own, other] of [
      [t.tokens.acme, 'acme:', 'globex:'],
      [t.tokens.globex, 'globex:', 'acme:'],
    ] as const) {
      for (const q of ['', '?detail=1', '?window=all&detail=true']) {
        const r = await t.get(`/telemetry/streams${q}`, token);
        expect(r.status).toBe(200);
        expect(r.text).toContain(own);
        expect(r.text).not.toContain(other);
      }
    }
  });
});

describe('routes refused to tenants', () => {
  it('timeseries and export without streamId are refused with 403, for tenants and operators alike', async () => {
    for (const token of [t.tokens.acme, t.tokens.operator]) {
      expectProblem(await t.get('/telemetry/timeseries', token), 403, 'stream_id_required');
      expectProblem(await t.get('/telemetry/timeseries?bucketSeconds=600&window=1h', token), 403, 'stream_id_required');
      expectProblem(await t.get('/telemetry/export', token), 403, 'stream_id_required');
      expectProblem(await t.get('/telemetry/export?streamId=', token), 403, 'stream_id_required');
    }
  });

});

describe('missing and invalid query values', () => {
  const bad: [string, string][] = [
    ['/telemetry/streams?window=2h', 'invalid_window'],
    ['/telemetry/streams?window=', 'invalid_window'],
    ['/telemetry/streams?window=1h&window=24h', 'invalid_window'],
    ['/telemetry/streams?detail=yes', 'invalid_detail'],
    ['/telemetry/metrics/acme:live-main?window=ALL', 'invalid_window'],
    ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=59', 'invalid_bucket_seconds'],
    ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=86401', 'invalid_bucket_seconds'],
    ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=600.5', 'invalid_bucket_seconds'],
    ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=abc', 'invalid_bucket_seconds'],
    ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=-600', 'invalid_bucket_seconds'],
    ['/telemetry/timeseries?streamId=acme:live-main&window=90d', 'invalid_window'],
    ['/telemetry/export?streamId=acme:live-main&format=xlsx', 'invalid_format'],
    ['/telemetry/export?streamId=acme:live-main&window=1d', 'invalid_window'],
    ['/control/reports/pilot/acme:live-main?format=pdf', 'invalid_format'],
    ['/control/reports/pilot/acme:live-main?format=', 'invalid_format'],
    ['/control/reports/pilot/acme:live-main?bucketSeconds=21601', 'invalid_bucket_seconds'],
    ['/control/reports/pilot/acme:live-main?bucketSeconds=59', 'invalid_bucket_seconds'],
    // Names every plain object has: enum values are looked up as own values only.
    ['/control/reports/pilot/acme:live-main?format=constructor', 'invalid_format'],
    ['/control/reports/pilot/acme:live-main?format=__proto__', 'invalid_format'],
    ['/control/reports/pilot/acme:live-main?format=toString', 'invalid_format'],
    ['/telemetry/export?streamId=acme:live-main&format=constructor', 'invalid_format'],
    ['/telemetry/export?streamId=acme:live-main&format=__proto__', 'invalid_format'],
    ['/telemetry/streams?window=constructor', 'invalid_window'],
    ['/telemetry/streams?detail=hasOwnProperty', 'invalid_detail'],
    ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=1e3', 'invalid_bucket_seconds'],
    ['/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=', 'invalid_bucket_seconds'],
  ];
  for (const [url, code] of bad) {
    it(`${url} → 400 ${code}`, async () => {
      const r = await t.get(url, t.tokens.acme);
      expectProblem(r, 400, code);
    });
  }

  it('groupBy is looked up as an own value too (operators)', async () => {
    for (const v of ['constructor', '__proto__', 'toString', 'customers']) {
      expectProblem(await t.get(`/telemetry/metrics?groupBy=${v}`, t.tokens.operator), 400, 'invalid_group_by');
    }
    expect((await t.get('/telemetry/metrics?groupBy=customer', t.tokens.operator)).status).toBe(200);
  });

  it('a bad value names its parameter and what is allowed', async () => {
    const r = await t.get('/telemetry/timeseries?streamId=acme:live-main&bucketSeconds=59', t.tokens.acme);
    expect(r.json).toMatchObject({ code: 'invalid_bucket_seconds', parameter: 'bucketSeconds', minimum: 60, maximum: 86_400 });
    const f = await t.get('/control/reports/pilot/acme:live-main?format=pdf', t.tokens.acme);
    expect(f.json).toMatchObject({ parameter: 'format', allowed: ['json', 'md', 'html', 'jws', 'markdown'] });
    const twice = await t.get('/telemetry/streams?window=1h&window=1h', t.tokens.acme);
    expect(twice.json).toMatchObject({ code: 'invalid_window', detail: expect.stringMatching(/more than once/) });
  });

  it('a bad query on another tenant\'s stream is still a 403, telling nothing', async () => {
    expectProblem(await t.get('/telemetry/metrics/globex:live-main?window=2h', t.tokens.acme), 403, 'forbidden_stream');
  });

  it('a raw ../ in the path is a route that does not exist, not a way out', async () => {
    const r = await t.request('GET', '/telemetry/metrics/acme:../../telemetry/metrics/globex:live-main', { token: t.tokens.acme });
    expect([403, 404]).toContain(r.status);
    expectNoForeignData(r);
  });

  it('unknown routes are 404 and wrong methods 405, as problems', async () => {
    expectProblem(await t.get('/telemetry/nothing', t.tokens.acme), 404, 'not_found');
    expectProblem(await t.get('/'), 404, 'not_found');
    const post = await t.request('POST', '/telemetry/streams', { token: t.tokens.acme, body: '{}' });
    expectProblem(post, 405, 'method_not_allowed');
    expect(post.headers.get('allow')).toContain('GET');
  });
});
