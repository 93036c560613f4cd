// `period=previous` on the summary and stream metrics routes: the figures of the period of the
// window's length that ends where the window starts, over real HTTP, against plain SQL over the
// raw files (the independent breakdown with its window ending at asOf − window; streams and active
// sessions at that end by their definitions).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { expectSameFigure, norm, type IndependentFilters, type Row } from '../helpers/independent.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { timestampParam } from '../../warehouse/duckdb/param-values.ts';
import { windowSeconds, type WindowName } from '../../warehouse/figures/windows.ts';

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi();
}, 240_000);

afterAll(async () => {
  await t?.close();
});

type Json = Record<string, unknown>;
const FIGURES = ['totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth', 'rebufferEvents', 'rebufferRatio', 'startupTimeP95Ms', 'p2pConnectionSuccess'];
/** The default ACTIVITY_HORIZON_SECONDS, which the test warehouse's rollups use. */
const HORIZON_SECONDS = 120;

/** Streams with a report in (from, end] and sessions active at end, of the streams starting with `prefix`. */
async function activity(prefix: string, from: Date, end: Date): Promise<{ streams: number; activePeers: number }> {
  const [row] = await (await t.independent()).query(
    `WITH upto AS (SELECT * FROM ind_reports WHERE ts <= $as_of AND starts_with(streamId, ${quotedString(prefix)})),
     latest AS (SELECT streamId, sessionId, max(ts) AS last_ts FROM upto GROUP BY ALL),
     ended AS (SELECT DISTINCT u.streamId, u.sessionId FROM upto u JOIN latest l USING (streamId, sessionId) WHERE u.ts = l.last_ts AND u.final)
     SELECT (SELECT count(DISTINCT streamId) FROM upto WHERE ts > $lower) AS streams,
            (SELECT count(*) FROM latest l WHERE l.last_ts >= $as_of - INTERVAL ${HORIZON_SECONDS} SECOND
               AND NOT EXISTS (SELECT 1 FROM ended e WHERE e.streamId = l.streamId AND e.sessionId = l.sessionId)) AS activePeers`,
    { as_of: timestampParam(end), lower: timestampParam(from) },
  );
  return { streams: Number(norm(row!['streams'])), activePeers: Number(norm(row!['activePeers'])) };
}

function bounds(window: WindowName): { from: Date; end: Date } {
  const ms = windowSeconds(window)! * 1000;
  return { from: new Date(AS_OF.getTime() - 2 * ms), end: new Date(AS_OF.getTime() - ms) };
}

function expectFigures(got: Json, theirs: Row | undefined, what: string): void {
  for (const f of FIGURES) {
    const zero = f === 'startupTimeP95Ms' || f === 'p2pConnectionSuccess' ? null : 0;
    expectSameFigure(got[f], theirs ? theirs[f] : zero, `${what} ${f}`);
  }
}

describe('GET /telemetry/summary?period=previous', () => {
  const cases: [WindowName, string[], IndependentFilters][] = [
    ['1h', [], {}],
    ['24h', [], {}],
    ['7d', [], {}],
    ['24h', ['device:mobile', '!region:eu-west'], { device: { keep: ['mobile'], drop: [] }, region: { keep: [], drop: ['eu-west'] } }],
  ];
  for (const [window, filters, theirs] of cases) {
    it(`${window}${filters.length ? ` ${filters.join(' ')}` : ''}: the period before the window equals plain SQL over it`, async () => {
      const qs = filters.map((f) => `&filter=${encodeURIComponent(f)}`).join('');
      const r = await t.get(`/telemetry/summary?window=${window}&period=previous${qs}`, t.tokens.acme);
      expect(r.status, r.text).toBe(200);
      const got = r.json as Json;
      const { from, end } = bounds(window);
      expect(got).toMatchObject({ window, period: 'previous', from: from.toISOString(), to: end.toISOString(), customerId: 'acme', asOf: AS_OF.toISOString() });
      const [row] = await (await t.independent()).breakdown(window, { by: null, streams: ['acme:'], filters: theirs, end });
      expectFigures(got, row, `summary ${window}`);
      expect({ streams: got['streams'], activePeers: got['activePeers'] }).toEqual(await activity('acme:', from, end));
      // A period with sessions, different from the window's own figures.
      expect(got['totalSessions']).toBeGreaterThan(0);
      const current = (await t.get(`/telemetry/summary?window=${window}${qs}`, t.tokens.acme)).json as Json;
      expect(got['totalBytesOffloaded']).not.toBe(current['totalBytesOffloaded']);
    });
  }

  it('refuses the window all (no previous period) with a 400 that says so', async () => {
    const r = await t.get('/telemetry/summary?window=all&period=previous', t.tokens.acme);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'no_previous_period' });
  });
});

describe('GET /telemetry/metrics/:streamId?period=previous', () => {
  for (const [streamId, window] of [
    ['acme:live-main', '24h'],
    ['acme:vod-library', '1h'],
    ['acme:live-main', '7d'],
  ] as [string, WindowName][]) {
    it(`${streamId} ${window}: equals plain SQL over the period before the window`, async () => {
      const r = await t.get(`/telemetry/metrics/${encodeURIComponent(streamId)}?window=${window}&period=previous`, t.tokens.acme);
      expect(r.status, r.text).toBe(200);
      const got = r.json as Json;
      const { from, end } = bounds(window);
      expect(got).toMatchObject({ streamId, window, period: 'previous', from: from.toISOString(), to: end.toISOString() });
      const [row] = await (await t.independent()).breakdown(window, { by: null, streams: [streamId], end });
      expectFigures(got, row, `${streamId} ${window}`);
      expect(got['activePeers']).toBe((await activity(streamId, from, end)).activePeers);
    });
  }
});
