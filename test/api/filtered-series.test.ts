// The breakdown route's `filter` on the series and the stream list, over real HTTP, against plain
// SQL over the raw files (a window function picks each session's earliest report; no partial
// sums): a filtered series counts the reports of the sessions the filters keep, each session's value
// that of its earliest report from the first bucket on; a filtered stream list holds the streams
// with a kept session in the window, each with those sessions' figures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { expectSameRows, norm, type IndependentFilters, type Row } from '../helpers/independent.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { WINDOWS, type WindowName } from '../../warehouse/figures/windows.ts';

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi();
}, 240_000);

afterAll(async () => {
  await t?.close();
});

type Json = Record<string, unknown>;
const DIMS = ['cohort', 'device', 'region', 'contentType', 'sdkVersion', 'signalingVersion'];

/** The filters' condition over a session's first report `f` (keeps of a dimension OR'ed, dimensions AND'ed). */
function condition(filters: IndependentFilters): string {
  const matches = (d: string, values: readonly (string | null)[]) =>
    values.length === 0 ? 'false' : `(${values.map((v) => (v === null ? `f.${d} IS NULL` : `coalesce(f.${d} = ${quotedString(v)}, false)`)).join(' OR ')})`;
  const parts = Object.entries(filters).map(([d, f]) => `${f.keep.length > 0 ? matches(d, f.keep) : 'true'} AND NOT ${matches(d, f.drop)}`);
  return parts.length > 0 ? parts.join(' AND ') : 'true';
}

/** Every non-empty bucket of the kept sessions' reports from `fromMs` on. */
async function independentSeries(streamId: string, size: number, fromMs: number, filters: IndependentFilters): Promise<Map<number, Row>> {
  const rows = await (await t.independent()).query(
    `WITH win AS (SELECT * FROM ind_reports WHERE streamId = $stream AND epoch_ms(ts) >= ${fromMs}),
     firsts AS (
       SELECT * FROM (
         SELECT sessionId, ${DIMS.join(', ')},
                row_number() OVER (PARTITION BY sessionId ORDER BY ts, seq NULLS LAST, ${DIMS.map((d) => `${d} NULLS LAST`).join(', ')}) AS rn
         FROM win
       ) WHERE rn = 1
     ),
     kept AS (SELECT w.*, to_timestamp(floor(epoch(w.ts) / ${size}) * ${size}) AS bucket FROM win w JOIN firsts f ON f.sessionId = w.sessionId WHERE ${condition(filters)}),
     session_peer AS (SELECT bucket, sessionId, avg(peerCount) AS mean_peers FROM kept GROUP BY ALL),
     session_startup AS (SELECT bucket, sessionId, max(startupMs) AS startup FROM kept GROUP BY ALL)
     SELECT epoch_ms(bucket) AS start, count(DISTINCT sessionId) AS sessions,
            sum(bytesOffloaded) AS bytesOffloaded, sum(bytesFallback) AS bytesFallback,
            coalesce(sum(bytesOffloaded) / nullif(sum(bytesOffloaded) + sum(bytesFallback), 0), 0) AS offloadRatio,
            coalesce((SELECT avg(mean_peers) FROM session_peer sp WHERE sp.bucket = k.bucket), 0) AS avgPeerCount,
            coalesce(avg(bufferHealth), 0) AS avgBufferHealth,
            sum(stallCount) AS rebufferEvents,
            sum(watchMs) AS watchMs, sum(stallMs) AS stallMs,
            coalesce(sum(stallMs) / nullif(sum(watchMs) + sum(stallMs), 0), 0) AS rebufferRatio,
            (SELECT quantile_cont(startup, 0.95) FROM session_startup ss WHERE ss.bucket = k.bucket) AS startupTimeP95Ms
     FROM kept k GROUP BY bucket`,
    { stream: streamId },
  );
  return new Map(rows.map((r) => [Number(norm(r['start'])), r]));
}

const PLAIN_ZERO = { sessions: 0, bytesOffloaded: 0, bytesFallback: 0, offloadRatio: 0, avgPeerCount: 0, avgBufferHealth: 0, rebufferEvents: 0 };
const QUALITY_ZERO = { ...PLAIN_ZERO, watchMs: 0, stallMs: 0, rebufferRatio: 0, startupTimeP95Ms: null };

const query = (filters: string[]) => filters.map((f) => `&filter=${encodeURIComponent(f)}`).join('');

describe('GET /telemetry/timeseries with filters', () => {
  const cases: [string, WindowName, number, string[], IndependentFilters, boolean][] = [
    ['acme:live-main', '24h', 600, ['device:mobile'], { device: { keep: ['mobile'], drop: [] } }, false],
    ['acme:live-main', '7d', 3600, ['!region:eu-west', 'cohort:p2p'], { region: { keep: [], drop: ['eu-west'] }, cohort: { keep: ['p2p'], drop: [] } }, true],
    ['acme:vod-library', 'all', 86400, ['device:mobile', 'device:tablet'], { device: { keep: ['mobile', 'tablet'], drop: [] } }, true],
    ['acme:live-sports', '30d', 5400, ['!device:mobile'], { device: { keep: [], drop: ['mobile'] } }, false],
  ];
  for (const [streamId, window, size, filters, theirs, quality] of cases) {
    it(`${streamId} ${window} at ${size} s, ${filters.join(' ')}${quality ? ', with quality' : ''}: equals plain SQL over the kept sessions`, async () => {
      const r = await t.get(`/telemetry/timeseries?streamId=${streamId}&window=${window}&bucketSeconds=${size}${query(filters)}${quality ? '&quality=true' : ''}`, t.tokens.acme);
      expect(r.status, r.text).toBe(200);
      const got = r.json as Json;
      const from = Date.parse(String(got['from']));
      const step = size * 1000;
      const seconds = WINDOWS.find((w) => w.name === window)!.seconds;
      if (seconds !== null) expect(from).toBe(Math.floor((AS_OF.getTime() - seconds * 1000) / step) * step);
      expect(got['to']).toBe(new Date(Math.floor(AS_OF.getTime() / step) * step).toISOString());
      expect(got['filters']).toEqual([...filters].sort((a, b) => Number(a.startsWith('!')) - Number(b.startsWith('!')) || a.localeCompare(b)).sort((a, b) => a.replace('!', '').split(':')[0]!.localeCompare(b.replace('!', '').split(':')[0]!)));
      const byStart = await independentSeries(streamId, size, from, theirs);
      const want: Row[] = [];
      for (let s = from; s <= Date.parse(String(got['to'])); s += step) {
        const row = byStart.get(s);
        const zero = quality ? QUALITY_ZERO : PLAIN_ZERO;
        want.push(Object.fromEntries(Object.keys(zero).map((k) => [k, row ? row[k] : zero[k as keyof typeof zero]])));
      }
      const buckets = got['buckets'] as Row[];
      expectSameRows(buckets, want, `${streamId} ${window} ${size} ${filters.join(' ')}`);
      // The filters kept some sessions and left some out.
      const all = await t.get(`/telemetry/timeseries?streamId=${streamId}&window=${window}&bucketSeconds=${size}`, t.tokens.acme);
      const allSessions = ((all.json as Json)['buckets'] as Row[]).reduce((n, b) => n + (b['sessions'] as number), 0);
      const keptSessions = buckets.reduce((n, b) => n + (b['sessions'] as number), 0);
      expect(keptSessions).toBeGreaterThan(0);
      expect(keptSessions).toBeLessThan(allSessions);
    });
  }

  it('refuses a bad filter with the breakdown route\'s 400', async () => {
    const r = await t.get('/telemetry/timeseries?streamId=acme:live-main&filter=colour:blue', t.tokens.acme);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'invalid_filter' });
  });
});

describe('GET /telemetry/streams with filters', () => {
  for (const [window, filters, theirs] of [
    ['24h', ['device:mobile'], { device: { keep: ['mobile'], drop: [] } }],
    ['7d', ['!region:eu-west'], { region: { keep: [], drop: ['eu-west'] } }],
    ['30d', ['region:nowhere'], { region: { keep: ['nowhere'], drop: [] } }],
  ] as [WindowName, string[], IndependentFilters][]) {
    it(`${window} ${filters.join(' ')}: the streams with a kept session, each with those sessions' figures`, async () => {
      const r = await t.get(`/telemetry/streams?window=${window}&detail=1${query(filters)}`, t.tokens.acme);
      expect(r.status, r.text).toBe(200);
      const got = r.json as Json;
      const unfiltered = (await t.get(`/telemetry/streams?window=${window}&detail=1`, t.tokens.acme)).json as { streams: Row[] };
      const ind = await t.independent();
      const want: Row[] = [];
      for (const s of unfiltered.streams) {
        const [row] = await ind.breakdown(window, { by: null, streams: [String(s['streamId'])], filters: theirs });
        if (!row || Number(norm(row['totalSessions'])) === 0) continue;
        const { value: _v, rebufferEvents: _e, rebufferRatio: _r, startupTimeP95Ms: _p, p2pConnectionSuccess: _c, ...figures } = row;
        want.push({ streamId: s['streamId'], ...figures, activePeers: s['activePeers'], live: s['live'], lastSeenAt: s['lastSeenAt'] });
      }
      const streams = got['streams'] as Row[];
      expect(streams.map((s) => s['streamId'])).toEqual(want.map((s) => s['streamId']));
      expectSameRows(streams, want, `streams ${window} ${filters.join(' ')}`);
      expect(got['filters']).toEqual(filters);
      const ids = await t.get(`/telemetry/streams?window=${window}${query(filters)}`, t.tokens.acme);
      expect((ids.json as Json)['streams']).toEqual(want.map((s) => s['streamId']));
    });
  }
});
