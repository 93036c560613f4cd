// GET /metrics: Prometheus text on the API port for operator tokens only, and without a token on
// the separate METRICS_PORT listener; request counts by route template (never a raw path) and
// status, snapshot age against the fixture's asOf, response-cache hits and misses, DuckDB slots.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AS_OF, startTestApi, type TestApi } from '../helpers/api.ts';

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ env: { METRICS_PORT: '0' } });
}, 240_000);

afterAll(async () => {
  await t?.close();
});

/** Samples of a Prometheus text exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

async function scrape(): Promise<{ text: string; samples: Map<string, number> }> {
  const res = await fetch(t.api.metricsUrl!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: samples(text) };
}

const count = (s: Map<string, number>, route: string, status: number, method = 'GET') =>
  s.get(`p2ptel_http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"}`) ?? 0;

describe('metrics', () => {
  it('on the API port: 401 without a token, 403 for a tenant, Prometheus text for an operator', async () => {
    expect((await t.get('/metrics')).status).toBe(401);
    const tenant = await t.get('/metrics', t.tokens.acme);
    expect(tenant.status).toBe(403);
    expect((tenant.json as { code: string }).code).toBe('operator_only');
    const op = await t.get('/metrics', t.tokens.operator);
    expect(op.status).toBe(200);
    expect(op.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(op.text).toContain('# TYPE p2ptel_http_request_duration_seconds histogram');
  });

  it('the separate listener serves /metrics and nothing else', async () => {
    expect(t.api.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(t.api.metricsUrl!.replace('/metrics', '/telemetry/streams'))).status).toBe(404);
  });

  it('counts requests by route template and status', async () => {
    const before = (await scrape()).samples;
    for (let i = 0; i < 3; i++) expect((await t.get('/telemetry/metrics/acme:live-main', t.tokens.acme)).status).toBe(200);
    expect((await t.get('/telemetry/metrics/globex:live-main', t.tokens.acme)).status).toBe(403);
    expect((await t.get('/telemetry/streams?window=nope', t.tokens.acme)).status).toBe(400);
    expect((await t.get('/no/such/route', t.tokens.acme)).status).toBe(404);
    const { text, samples: after } = await scrape();
    expect(count(after, '/telemetry/metrics/:streamId', 200) - count(before, '/telemetry/metrics/:streamId', 200)).toBe(3);
    expect(count(after, '/telemetry/metrics/:streamId', 403) - count(before, '/telemetry/metrics/:streamId', 403)).toBe(1);
    expect(count(after, '/telemetry/streams', 400) - count(before, '/telemetry/streams', 400)).toBe(1);
    expect(count(after, '(none)', 404) - count(before, '(none)', 404)).toBe(1);
    // Bounded labels: templates, never the stream ids or paths a client sent.
    expect(text).not.toMatch(/acme:live-main|globex|\/no\/such\/route/);
  });

  it('snapshot age is now minus the served asOf; cache hits and misses; DuckDB slots', async () => {
    const url = '/telemetry/metrics/acme:live-sports?window=7d';
    const before = (await scrape()).samples;
    await t.get(url, t.tokens.acme);
    await t.get(url, t.tokens.acme);
    const started = Date.now();
    const after = (await scrape()).samples;
    const age = after.get('p2ptel_snapshot_age_seconds')!;
    expect(Math.abs(age - (started - AS_OF.getTime()) / 1000)).toBeLessThan(30);
    const hits = (s: Map<string, number>) => s.get('p2ptel_api_cache_lookups_total{cache="responses",result="hit"}') ?? 0;
    const misses = (s: Map<string, number>) => s.get('p2ptel_api_cache_lookups_total{cache="responses",result="miss"}') ?? 0;
    expect(misses(after) - misses(before)).toBe(1);
    expect(hits(after) - hits(before)).toBe(1);
    // The second request repeats the first (same token, URL, snapshot): replayed before the routers.
    const replays = (s: Map<string, number>, result: string) => s.get(`p2ptel_api_cache_lookups_total{cache="replays",result="${result}"}`) ?? 0;
    expect(replays(after, 'hit') - replays(before, 'hit')).toBe(1);
    expect(replays(after, 'miss') - replays(before, 'miss')).toBe(1);
    expect(after.get('p2ptel_duckdb_slots{pool="default",state="active"}')).toBe(0);
    expect(after.get('p2ptel_duckdb_slots{pool="default",state="waiting"}')).toBe(0);
    expect(after.get('p2ptel_snapshot_swap_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(after.has('p2ptel_process_resident_memory_bytes')).toBe(true);
  });
});
