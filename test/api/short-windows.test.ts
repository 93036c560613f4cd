// The short windows 5m and 15m over real HTTP, on hand-placed reports around both edges of each:
// asOf 12:03 (both windows cross 12:00), a report at asOf − 5 min exactly (out of 5m, in 15m), one
// a millisecond later, one at asOf (in) and one a millisecond after it (out), one at asOf − 15 min
// exactly (out) and a millisecond later (in), copies of a report in two files, and sessions whose
// earliest report in a window is not their earliest overall (so their device differs by window).
// The metrics and breakdown routes (with filters, a stream, a tenant, the platform, period=previous)
// against independent plain SQL over the raw files and hand-worked counts; an alert rule on 5m
// fires with the value the route serves; the other routes refuse 5m with the documented 400, and
// so does every route a window that does not exist (7m).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { apiConfig } from '../helpers/api.ts';
import { expectSameFigure, Independent, type IndependentFilters, type Row } from '../helpers/independent.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { addTenant } from '../../control/tenants.ts';
import { silentLogger } from '../../lib/log.ts';
import { evaluateSnapshot } from '../../alerts/evaluate.ts';
import { shortWindowClasses } from '../../served/short-window-classes.ts';
import type { ShortWindowName } from '../../warehouse/figures/windows.ts';

const AS_OF = new Date('2026-11-20T12:03:00.000Z');
const at = (offsetMs: number) => new Date(AS_OF.getTime() + offsetMs).toISOString();
const MIN = 60_000;

let wh: TestWarehouse;
let api: RunningApi;
let ind: Independent;
const tokens: Record<string, string> = {};

/** A report with figures that differ from report to report (so that a report counted wrongly shows). */
function report(sessionId: string, streamId: string, seq: number, offsetMs: number, dims: Partial<HandReport> = {}): HandReport {
  const n = seq + sessionId.length * 7 + Math.abs(offsetMs % 9973);
  return {
    reportId: `${sessionId}-r${seq}`, sessionId, streamId, ts: at(offsetMs), seq,
    bytesOffloaded: 1000 * n, bytesFallback: 300 * (n % 11), peerCount: n % 6, bufferHealth: (n % 13) + 0.5,
    stallCount: n % 3, stallMs: 100 * (n % 5), watchMs: 20_000 + n, startupMs: seq === 0 ? 200 + n : null,
    p2pConnAttempts: 4, p2pConnSuccesses: n % 5, ...dims,
  };
}

const LIVE0 = 'acme:live-0';
const LIVE1 = 'acme:live-1';

const FIRST: HandReport[] = [
  // s1: at asOf − 5 min exactly (out of 5m, in 15m), a millisecond later, and at asOf.
  report('s1', LIVE0, 0, -5 * MIN, { device: 'tv', region: 'us-east' }),
  report('s1', LIVE0, 1, -5 * MIN + 1, { device: 'mobile', region: 'eu-west' }),
  report('s1', LIVE0, 2, 0, { device: 'desktop' }),
  // s2: earliest overall outside both windows, then in 15m only, then in 5m (across 12:00).
  report('s2', LIVE0, 0, -23 * MIN, { device: 'desktop', region: 'us-east' }),
  report('s2', LIVE0, 1, -13 * MIN, { device: 'mobile', region: 'us-east' }),
  report('s2', LIVE0, 2, -2 * MIN, { device: 'tv', region: 'eu-west' }),
  // s3: at asOf − 15 min exactly (out), a millisecond later (in 15m), and after asOf (out).
  report('s3', LIVE0, 0, -15 * MIN, { device: 'tv' }),
  report('s3', LIVE0, 1, -15 * MIN + 1, { device: 'mobile' }),
  report('s3', LIVE0, 2, 1, { device: 'mobile' }),
  // s4 on the other stream: on both sides of 12:00 (11:59:59.999 and 12:00:00.000).
  report('s4', LIVE1, 0, -3 * MIN - 1, { device: 'mobile', region: 'ap-south' }),
  report('s4', LIVE1, 1, -3 * MIN, { device: 'mobile', region: 'ap-south' }),
  // s5: yesterday and an hour ago: in no short window.
  report('s5', LIVE1, 0, -24 * 60 * MIN),
  report('s5', LIVE1, 1, -60 * MIN + 5),
  // Another customer's session in both windows: never in acme's.
  report('g1', 'globex:live-0', 0, -MIN, { device: 'mobile' }),
];
/** Copies of reports landed again in another file (a retried upload). */
const COPIES: HandReport[] = [FIRST[2]!, FIRST[5]!, FIRST[10]!];

beforeAll(async () => {
  wh = await openTestWarehouse();
  const byPartition = new Map<string, HandReport[]>();
  for (const r of FIRST) {
    const key = `${r.streamId.split(':')[0]}|${r.ts.slice(0, 10)}`;
    byPartition.set(key, [...(byPartition.get(key) ?? []), r]);
  }
  for (const [key, rows] of byPartition) {
    const [customer, date] = key.split('|') as [string, string];
    await writeReportsParquet(wh.db, landingPath(wh.root, customer, date, 'a.parquet'), rows);
  }
  await writeReportsParquet(wh.db, landingPath(wh.root, 'acme', '2026-11-20', 'b.parquet'), COPIES);
  await runPipeline(wh, { asOf: AS_OF });
  const secret = await tokenSecret(wh.layout, null);
  for (const customerId of ['acme', 'globex']) {
    const tenant = await addTenant(wh.layout, { customerId, name: customerId, cdnPricePerGb: null, savingsSharePct: 25 });
    tokens[customerId] = await issueToken(secret, { role: 'tenant', tenant }, 3600);
  }
  tokens['operator'] = await issueToken(secret, { role: 'operator' }, 3600);
  api = await startApi(apiConfig(wh.root), silentLogger);
  ind = await Independent.create(wh.db, wh.layout.rawReports, AS_OF);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await wh?.close();
});

interface Answer {
  status: number;
  type: string | null;
  json: Record<string, unknown>;
}

async function request(method: string, path: string, token: string | null, body?: unknown): Promise<Answer> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
const get = (path: string, token: string | null) => request('GET', path, token);

const FIGURES = ['totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth', 'rebufferEvents', 'rebufferRatio', 'startupTimeP95Ms', 'p2pConnectionSuccess'];

function expectFigures(got: Record<string, unknown>, theirs: Row | undefined, what: string): void {
  for (const f of FIGURES) {
    const zero = f === 'startupTimeP95Ms' || f === 'p2pConnectionSuccess' ? null : 0;
    expectSameFigure(got[f], theirs ? theirs[f] : zero, `${what} ${f}`);
  }
}

const qs = (filters: IndependentFilters) =>
  Object.entries(filters)
    .flatMap(([d, f]) => [...f.keep.map((v) => `filter=${encodeURIComponent(`${d}:${v ?? ''}`)}`), ...f.drop.map((v) => `filter=${encodeURIComponent(`!${d}:${v ?? ''}`)}`)])
    .map((x) => `&${x}`)
    .join('');

const FILTERS: IndependentFilters[] = [{}, { device: { keep: ['mobile'], drop: [] } }, { region: { keep: [], drop: ['us-east'] } }];
const SHORT: ShortWindowName[] = ['5m', '15m'];

describe('GET /telemetry/metrics/:streamId with a short window', () => {
  it('equals plain SQL over the raw reports, unfiltered and filtered, to the report at both edges', async () => {
    for (const window of SHORT) {
      for (const streamId of [LIVE0, LIVE1, 'globex:live-0']) {
        for (const filters of FILTERS) {
          const token = streamId.startsWith('globex') ? tokens['globex']! : tokens['acme']!;
          const r = await get(`/telemetry/metrics/${streamId}?window=${window}${qs(filters)}`, token);
          expect(r.status, JSON.stringify(r.json)).toBe(200);
          expect(r.json).toMatchObject({ streamId, window, asOf: AS_OF.toISOString() });
          expect('filters' in r.json).toBe(Object.keys(filters).length > 0);
          const [theirs] = await ind.breakdown(window, { by: null, streams: [streamId], filters });
          expectFigures(r.json, theirs, `${streamId} ${window} ${qs(filters)}`);
        }
      }
    }
  });

  it('counts the hand-worked sessions: the edges, copies and a report after asOf', async () => {
    const sessions = async (streamId: string, window: string, filter = '') =>
      (await get(`/telemetry/metrics/${streamId}?window=${window}${filter}`, tokens['acme']!)).json['totalSessions'];
    // 5m: s1 (from asOf − 5 min + 1 ms, and asOf) and s2 (12:01); s3's reports are at the 15 min edge or after asOf.
    expect(await sessions(LIVE0, '5m')).toBe(2);
    expect(await sessions(LIVE0, '15m')).toBe(3);
    expect(await sessions(LIVE1, '5m')).toBe(1);
    // Dimensions of a session's earliest report in the window: s1 is mobile in 5m (tv at the edge is out), s2 tv.
    expect(await sessions(LIVE0, '5m', '&filter=device:mobile')).toBe(1);
    expect(await sessions(LIVE0, '5m', '&filter=device:tv')).toBe(1);
    // In 15m: s1 tv (its edge report is in), s2 mobile (its 11:40 report is out), s3 mobile.
    expect(await sessions(LIVE0, '15m', '&filter=device:tv')).toBe(1);
    expect(await sessions(LIVE0, '15m', '&filter=device:mobile')).toBe(2);
    // s1's bytes in 5m: its reports at asOf − 5 min + 1 ms and at asOf (the copy counted once).
    const bytes = (await get(`/telemetry/metrics/${LIVE0}?window=5m&filter=device:mobile`, tokens['acme']!)).json['totalBytesOffloaded'];
    expect(bytes).toBe(FIRST[1]!.bytesOffloaded! + FIRST[2]!.bytesOffloaded!);
  });

  it('serves period=previous of a short window: the 5 minutes before it, like plain SQL', async () => {
    const r = await get(`/telemetry/metrics/${LIVE0}?window=5m&period=previous`, tokens['acme']!);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const end = new Date(AS_OF.getTime() - 5 * MIN);
    expect(r.json).toMatchObject({ window: '5m', period: 'previous', to: end.toISOString(), from: new Date(AS_OF.getTime() - 10 * MIN).toISOString() });
    const [theirs] = await ind.breakdown('5m', { by: null, streams: [LIVE0], end });
    expectFigures(r.json, theirs, 'previous 5m');
    // s1 at asOf − 5 min exactly is the previous period's last instant.
    expect(r.json['totalSessions']).toBe(1);
  });
});

describe('GET /telemetry/breakdown with a short window', () => {
  it('equals plain SQL for a stream, a tenant and the platform, by device and region, with filters', async () => {
    for (const window of SHORT) {
      for (const by of ['device', 'region']) {
        for (const filters of FILTERS) {
          const cases: [string, string, string[] | undefined][] = [
            [`streamId=${LIVE0}&`, tokens['acme']!, [LIVE0]],
            ['', tokens['acme']!, ['acme:']],
            ['', tokens['operator']!, undefined],
          ];
          for (const [scope, token, streams] of cases) {
            const r = await get(`/telemetry/breakdown?${scope}by=${by}&window=${window}${qs(filters)}`, token);
            expect(r.status, JSON.stringify(r.json)).toBe(200);
            expect(r.json).toMatchObject({ asOf: AS_OF.toISOString(), window, by });
            const theirs = await ind.breakdown(window, { by, filters, ...(streams ? { streams } : {}) });
            const rows = r.json['rows'] as Row[];
            expect(rows.map((x) => x['value']), `${window} ${by} ${scope}`).toEqual(theirs.map((x) => x['value']));
            rows.forEach((row, i) => expectFigures(row, theirs[i], `${window} ${by} ${scope} ${qs(filters)} row ${i}`));
          }
        }
      }
    }
    // By hand: acme's 5m by device is s1 mobile, s2 tv, s4 mobile.
    const hand = (await get('/telemetry/breakdown?by=device&window=5m', tokens['acme']!)).json['rows'] as Row[];
    expect(hand.map((x) => [x['value'], x['totalSessions']])).toEqual([['mobile', 2], ['tv', 1]]);
  });

  it('keeps what it made for the snapshot: later questions of any filter read the same tables', async () => {
    const classes = shortWindowClasses(api.deps.db);
    const before = classes.size;
    expect(before).toBeGreaterThan(0);
    for (const filter of ['&filter=device:tv', '&filter=!device:tv', '&filter=region:eu-west']) {
      expect((await get(`/telemetry/breakdown?by=cohort&window=15m${filter}`, tokens['acme']!)).status).toBe(200);
      expect((await get(`/telemetry/metrics/${LIVE1}?window=5m${filter}`, tokens['acme']!)).status).toBe(200);
    }
    expect(classes.size).toBe(before);
  });
});

describe('windows each route takes', () => {
  it('refuses 5m and 15m where only a snapshot\'s windows are served, and 7m everywhere, with the documented 400', async () => {
    const refused = [
      '/telemetry/summary?window=5m',
      '/telemetry/streams?window=15m',
      `/telemetry/timeseries?streamId=${LIVE0}&window=5m`,
      `/telemetry/export?streamId=${LIVE0}&window=5m`,
      `/telemetry/metrics/${LIVE0}?window=7m`,
      '/telemetry/breakdown?by=device&window=7m',
    ];
    for (const path of refused) {
      const r = await get(path, tokens['acme']!);
      expect(r.status, path).toBe(400);
      expect(r.type, path).toMatch(/^application\/problem\+json/);
      expect(r.json, path).toMatchObject({ code: 'invalid_window', status: 400, parameter: 'window' });
      const allowed = r.json['allowed'] as string[];
      expect(allowed.includes('5m'), path).toBe(path.includes('/metrics/') || path.includes('/breakdown'));
      expect(allowed, path).toContain('1h');
    }
  });
});

describe('an alert rule on a short window', () => {
  it('fires with the value the metrics route serves at that snapshot', async () => {
    const rule = await request('POST', '/control/alerts', tokens['acme']!, {
      name: 'short', metric: 'avgOffloadRatio', streamId: LIVE0, window: '5m', condition: 'above', threshold: 0,
    });
    expect(rule.status, JSON.stringify(rule.json)).toBe(201);
    const tenantWide = await request('POST', '/control/alerts', tokens['acme']!, {
      name: 'short, tenant', metric: 'totalSessions', filters: ['device:mobile'], window: '15m', condition: 'above', threshold: 2,
    });
    expect(tenantWide.status).toBe(201);
    const snap = api.deps.store.current()!;
    await evaluateSnapshot({ db: api.deps.db, layout: api.deps.layout, log: silentLogger }, snap);
    const open = (await get('/control/incidents?state=open', tokens['acme']!)).json['incidents'] as { ruleId: string; valueAtOpen: number }[];
    const served = (await get(`/telemetry/metrics/${LIVE0}?window=5m`, tokens['acme']!)).json;
    const byRule = new Map(open.map((i) => [i.ruleId, i.valueAtOpen]));
    expect(byRule.get(rule.json['id'] as string)).toBe(served['avgOffloadRatio']);
    // 15m, device:mobile, acme: s2 and s3 on live-0, s4 on live-1 (s1 was tv at its earliest).
    const mobile = (await get('/telemetry/breakdown?by=device&window=15m&filter=device:mobile', tokens['acme']!)).json['rows'] as Row[];
    expect(mobile[0]!['totalSessions']).toBe(3);
    expect(byRule.get(tenantWide.json['id'] as string)).toBe(3);
  });
});

describe('short window classes across snapshots', () => {
  it("drops an older snapshot's tables once a newer snapshot's question is asked", async () => {
    const classes = shortWindowClasses(api.deps.db);
    expect(classes.size).toBeGreaterThan(1);
    const later = new Date(AS_OF.getTime() + MIN);
    await runPipeline(wh, { asOf: later });
    await api.deps.store.refresh();
    expect(api.deps.store.current()!.manifest.asOf).toBe(later.toISOString());
    const r = await get(`/telemetry/metrics/${LIVE0}?window=5m`, tokens['acme']!);
    expect(r.json).toMatchObject({ asOf: later.toISOString() });
    // (12:04 − 5 min, 12:04]: s1 (12:03) and s2 (12:01); s3's report at 12:03:00.001 is in now.
    expect(r.json['totalSessions']).toBe(3);
    expect(classes.size).toBe(1);
  });
});
