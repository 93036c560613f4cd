// The collector's metrics: GET /metrics on a listener of its own (COLLECTOR_METRICS_PORT), never on
// the public ingest port; requests counted by route template and status, as many as were sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCollector, sampleReport, type TestCollector } from '../helpers/collector.ts';

let t: TestCollector;

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
});
