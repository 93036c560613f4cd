// The series route's quality figures (`quality=true`): each bucket's watch and stall time, rebuffer
// ratio, startup-time p95 and P2P connection success, over real HTTP, against plain SQL over the
// raw files (written apart from warehouse/sql: reports, not pieces; an ordered-set percentile).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { expectSameRows, norm, type Row } from '../helpers/independent.ts';
import { WINDOWS, type WindowName } from '../../warehouse/figures/windows.ts';

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi();
}, 240_000);

afterAll(async () => {
  await t?.close();
});

type Json = Record<string, unknown>;

/** Every non-empty bucket's figures of one stream, straight from the deduplicated reports. */
async function independentQuality(streamId: string, size: number): Promise<Map<number, Row>> {
  const rows = await (await t.independent()).query(
    `WITH b AS (
       SELECT *, to_timestamp(floor(epoch(ts) / ${size}) * ${size}) AS bucket FROM ind_reports WHERE streamId = $stream
     )
     SELECT epoch_ms(bucket) AS start,
            sum(watchMs) AS watchMs, sum(stallMs) AS stallMs, sum(stallCount) AS rebufferEvents,
            coalesce(sum(stallMs) / nullif(sum(watchMs) + sum(stallMs), 0), 0) AS rebufferRatio,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY startupMs) AS startupTimeP95Ms,
            sum(p2pConnSuccesses) / nullif(sum(p2pConnAttempts), 0) AS p2pConnectionSuccess,
            count(DISTINCT sessionId) AS sessions, sum(bytesOffloaded) AS bytesOffloaded
     FROM b GROUP BY bucket`,
    { stream: streamId },
  );
  return new Map(rows.map((r) => [Number(norm(r['start'])), r]));
}

const EMPTY = { watchMs: 0, stallMs: 0, rebufferEvents: 0, rebufferRatio: 0, startupTimeP95Ms: null, p2pConnectionSuccess: null, sessions: 0, bytesOffloaded: 0 };

async function expectedBuckets(streamId: string, window: WindowName, size: number, first: number): Promise<Row[]> {
  const byStart = await independentQuality(streamId, size);
  const step = size * 1000;
  const seconds = WINDOWS.find((w) => w.name === window)!.seconds;
  const to = Math.floor(AS_OF.getTime() / step) * step;
  const from = seconds === null ? first : Math.floor((AS_OF.getTime() - seconds * 1000) / step) * step;
  const out: Row[] = [];
  for (let s = from; s <= to; s += step) {
    const r = byStart.get(s);
    out.push(r ? { ...r, start: undefined } : EMPTY);
  }
  return out.map(({ start: _s, ...figures }) => figures);
}

describe('GET /telemetry/timeseries?quality=true', () => {
  const cases: [string, WindowName, number][] = [
    ['acme:live-main', '24h', 600],
    ['acme:vod-library', '7d', 3600],
    ['acme:live-main', 'all', 86400],
    // A size no rollup precomputes.
    ['acme:live-sports', '30d', 5400],
  ];
  for (const [streamId, window, size] of cases) {
    it(`${streamId} ${window} at ${size} s: every bucket's quality figures equal plain SQL over the raw files`, async () => {
      const r = await t.get(`/telemetry/timeseries?streamId=${streamId}&window=${window}&bucketSeconds=${size}&quality=true`, t.tokens.acme);
      expect(r.status, r.text).toBe(200);
      const got = r.json as Json;
      const buckets = got['buckets'] as Row[];
      const want = await expectedBuckets(streamId, window, size, Date.parse(String(got['from'])));
      expectSameRows(buckets, want, `${streamId} ${window} ${size}`);
      // Some buckets have a percentile, and the plain figures are those of the plain series.
      expect(buckets.some((b) => typeof b['startupTimeP95Ms'] === 'number' && (b['rebufferRatio'] as number) > 0)).toBe(true);
      const plain = await t.get(`/telemetry/timeseries?streamId=${streamId}&window=${window}&bucketSeconds=${size}`, t.tokens.acme);
      const plainJson = plain.json as Json;
      expect({ ...got, buckets: undefined }).toEqual({ ...plainJson, buckets: undefined });
      const keys = Object.keys((plainJson['buckets'] as Row[])[0]!);
      expect(buckets.map((b) => Object.fromEntries(keys.map((k) => [k, b[k]])))).toEqual(plainJson['buckets']);
    });
  }

  it('a percentile per bucket, not an average of percentiles: one hand-worked day', async () => {
    // The day's p95 over its own sessions, against the daily bucket the route serves.
    const [day] = await (await t.independent()).query(
      `SELECT epoch_ms(date_trunc('day', ts)) AS start, quantile_cont(startupMs, 0.95) AS p95
       FROM ind_reports WHERE streamId = 'acme:live-main' AND startupMs IS NOT NULL
       GROUP BY 1 ORDER BY 1 LIMIT 1`,
    );
    const r = await t.get('/telemetry/timeseries?streamId=acme:live-main&window=all&bucketSeconds=86400&quality=1', t.tokens.acme);
    const bucket = ((r.json as Json)['buckets'] as Row[]).find((b) => Date.parse(String(b['start'])) === Number(norm(day!['start'])));
    expect(bucket!['startupTimeP95Ms']).toBeCloseTo(Number(day!['p95']), 9);
  });

  it('refuses a bad quality value with a 400 naming the parameter', async () => {
    const r = await t.get('/telemetry/timeseries?streamId=acme:live-main&quality=maybe', t.tokens.acme);
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain('quality');
  });
});
