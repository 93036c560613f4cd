// The collector's metrics: GET /metrics on a listener of its own (COLLECTOR_METRICS_PORT), never on
// the public ingest port; requests counted by route template and status, as many as were sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCollector, sampleReport, type TestCollector } from '../helpers/collector.ts';

let t: TestCollector;
const started = Date.now();

beforeAll(async () => {
  t = await startTestCollector({ env: { COLLECTOR_METRICS_PORT: '0' } });
}, 60_000);

afterAll(async () => {
  await t?.close();
});

async function samples(): Promise<Map<string, number>> {
  const text = await (await fetch(t.collector.metricsUrl!)).text();
  return new Map(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
}

const count = (m: Map<string, number>, status: number) =>
  m.get(`p2ptel_http_request_duration_seconds_count{method="POST",route="/v1/session-reports",status="${status}"}`) ?? 0;

describe('collector metrics', () => {
  it('are served on their own listener only, and count the requests by route and status', async () => {
    expect(t.collector.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    // Not on the public ingest port.
    expect((await fetch(`${t.url}/metrics`)).status).toBe(404);

    const before = await samples();
    const recent = new Date(Date.now() - 60_000);
    for (let i = 0; i < 3; i++) {
      expect((await t.post(JSON.stringify({ reports: [sampleReport('acme:live-main', recent, 100 + i)] }))).status).toBe(202);
    }
    expect((await t.post('{"reports": [', {})).status).toBe(400);
    expect((await t.post(JSON.stringify({ reports: [] }), { key: null })).status).toBe(401);

    const after = await samples();
    expect(count(after, 202) - count(before, 202)).toBe(3);
    expect(count(after, 400) - count(before, 400)).toBe(1);
    expect(count(after, 401) - count(before, 401)).toBe(1);
    expect(after.has('p2ptel_process_cpu_seconds_total')).toBe(true);
  });

  it('count reports accepted and rejected, each group commit of the spool, what waits in it, and what the flusher landed', async () => {
    const before = await samples();
    const recent = new Date(Date.now() - 60_000);
    const good = (n: number) => sampleReport('acme:live-main', recent, 500 + n);
    // 2 + 3 accepted, 1 + 1 rejected (a negative counter, a report of the future), in two requests.
    const first = await t.post(JSON.stringify({ reports: [good(0), good(1), { ...good(2), stallMs: -1 }] }));
    expect(first.status).toBe(202);
    const second = await t.post(JSON.stringify({ reports: [good(3), good(4), good(5), { ...good(6), ts: new Date(Date.now() + 3_600_000).toISOString() }] }));
    expect(second.status).toBe(202);
    expect([first.json, second.json]).toMatchObject([{ accepted: 2 }, { accepted: 3 }]);
    // Refused whole (a report of another customer's stream): counted as neither.
    expect((await t.post(JSON.stringify({ reports: [good(7), sampleReport('globex:live-main', recent, 8)] }))).status).toBe(403);

    // The oldest report not landed yet was acknowledged during this test (the first test's three
    // are older still: landed or not, at most the time since this file started).
    await new Promise((r) => setTimeout(r, 1100));
    const mid = await samples();
    expect(mid.get('p2ptel_collector_oldest_unlanded_seconds')).toBeGreaterThanOrEqual(1);
    expect(mid.get('p2ptel_collector_oldest_unlanded_seconds')).toBeLessThan((Date.now() - started) / 1000 + 1);
    const delta = (name: string, a = before, b = mid) => (b.get(name) ?? 0) - (a.get(name) ?? 0);
    expect(delta('p2ptel_collector_reports_total{outcome="accepted"}')).toBe(5);
    expect(delta('p2ptel_collector_reports_total{outcome="rejected"}')).toBe(2);
    // One group commit per request here (they were sent one after the other), each observed once.
    expect(delta('p2ptel_collector_spool_fsync_seconds_count')).toBe(2);
    expect(delta('p2ptel_collector_spool_fsync_seconds_bucket{le="+Inf"}')).toBe(2);
    expect(delta('p2ptel_collector_spool_fsync_seconds_sum')).toBeGreaterThan(0);
    // What waits in the spool: the bytes the spool itself says it holds.
    expect(mid.get('p2ptel_collector_spool_bytes')).toBe(t.collector.deps.spool.bytes());
    expect(mid.get('p2ptel_collector_spool_bytes')).toBeGreaterThan(0);

    await t.collector.flush();
    const after = await samples();
    const landedNow = (await t.landed()).length;
    // Every report accepted by this collector so far is in the landing area, counted once.
    expect(after.get('p2ptel_collector_landed_reports_total')).toBe(landedNow);
    expect(after.get('p2ptel_collector_reports_total{outcome="accepted"}')).toBe(landedNow);
    expect(delta('p2ptel_collector_landing_seconds_count', mid, after)).toBeGreaterThanOrEqual(1);
    expect(after.get('p2ptel_collector_spool_bytes')).toBe(0);
    expect(after.get('p2ptel_collector_spool_sealed_segments')).toBe(0);
    expect(after.get('p2ptel_collector_oldest_unlanded_seconds')).toBe(0);
  });
});
