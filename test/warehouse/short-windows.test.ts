// The short windows (5m, 15m) against independent SQL over the raw reports: dense sessions
// reporting every 30 s around asOf, asOf at several places of an hour (edges in asOf's hour, in the
// hour before, on an hour's first instant), a first run and a layered run after more files land.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameRows, Independent, type IndependentFilters, type Row } from '../helpers/independent.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { seededRandom } from '../helpers/random.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot } from '../../warehouse/snapshot-read.ts';
import { sessionClassFiles, snapshotFiles } from '../../warehouse/snapshots.ts';
import { queryBreakdown, sessionClassesRelation, type SessionDimension } from '../../warehouse/breakdowns.ts';
import type { WindowName } from '../../warehouse/windows.ts';
import { timestampParam } from '../../warehouse/duckdb/param-values.ts';

const SHORT: WindowName[] = ['5m', '15m'];
const MIN = 60_000;
const T0 = Date.parse('2026-11-20T11:00:00Z');

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

/** Sessions of two customers reporting every 30 s (with jitter) from `from` to `to`, some with copies. */
function denseReports(seed: number, from: number, to: number, tag: string): HandReport[] {
  const r = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const out: HandReport[] = [];
  for (const c of ['acme', 'globex']) {
    for (let k = 0; k < 12; k++) {
      const sessionId = `${c}-${tag}-s${k}`;
      let ts = from + Math.floor(r() * (to - from - 5 * MIN));
      const end = Math.min(to, ts + int(3, 40) * MIN);
      const device = (['desktop', 'mobile', 'tv'] as const)[k % 3]!;
      for (let seq = 0; ts <= end; seq++, ts += 30_000 + int(-2000, 2000)) {
        const attempts = int(0, 3);
        out.push({
          reportId: `${sessionId}-r${seq}`, sessionId, streamId: `${c}:live-${k % 2}`, ts: new Date(ts).toISOString(), seq,
          final: ts + 30_000 > end && r() < 0.5, device: seq > 5 && k === 4 ? 'tablet' : device, region: k % 2 ? 'eu-west' : 'us-east',
          bytesOffloaded: int(0, 3_000_000), bytesFallback: int(0, 3_000_000), peerCount: int(0, 9), bufferHealth: int(0, 30_000) / 1000,
          stallCount: int(0, 2), stallMs: int(0, 3000), watchMs: int(10_000, 30_000), startupMs: seq === 0 ? int(100, 3000) : null,
          p2pConnAttempts: attempts, p2pConnSuccesses: int(0, attempts),
        });
      }
    }
  }
  return out;
}

async function land(reports: HandReport[], name: string): Promise<void> {
  const byPartition = new Map<string, HandReport[]>();
  for (const x of reports) {
    const key = `${x.streamId.split(':')[0]}/${x.ts.slice(0, 10)}`;
    byPartition.set(key, [...(byPartition.get(key) ?? []), x]);
  }
  for (const [key, rows] of byPartition) {
    const [customer, date] = key.split('/') as [string, string];
    await writeReportsParquet(wh.db, landingPath(wh.root, customer, date, name), rows);
  }
}

const FILTERS: IndependentFilters[] = [{}, { device: { keep: ['mobile', 'tablet'], drop: [] } }, { region: { keep: [], drop: ['eu-west'] } }];

async function expectShortBreakdowns(asOf: Date, what: string): Promise<void> {
  const snap = (await currentSnapshot(wh.layout))!;
  expect(snap.manifest.asOf).toBe(asOf.toISOString());
  const ind = await Independent.create(wh.db, wh.layout.rawReports, asOf);
  const relations = ['acme', 'globex'].map((c) => sessionClassesRelation(sessionClassFiles(snapshotFiles(snap.dir), [c])));
  for (const window of SHORT) {
    const [{ n }] = (await ind.query(`SELECT count(*) AS n FROM ind_reports WHERE ts > $lower`, { lower: timestampParam(new Date(asOf.getTime() - (window === '5m' ? 5 : 15) * MIN)) })) as [Row];
    expect(Number(n), `${what}: reports in ${window}`).toBeGreaterThan(10);
    for (const by of [null, 'device'] as (SessionDimension | null)[]) {
      for (const [i, f] of FILTERS.entries()) {
        const theirs = await ind.breakdown(window, { by, filters: f });
        const filters = new Map(Object.entries(f).map(([d, v]) => [d as SessionDimension, v]));
        const mine = await wh.db.withSession((s) => queryBreakdown(s, relations, { window, streamId: null, by, filters }));
        expectSameRows(mine as unknown as Row[], theirs, `${what} ${window} by ${by} filters #${i}`);
      }
    }
  }
}

describe('the 5m and 15m windows equal independent SQL over the raw reports', () => {
  it('summaries, platform rows and breakdowns at edges inside asOf\'s hour, in the hour before and on an hour', async () => {
    await land(denseReports(1, T0 - 50 * MIN, T0 + 85 * MIN, 'a'), 'a.parquet');
    for (const [what, at] of [
      ['edges inside asOf\'s hour', T0 + 37 * MIN + 13_250],
      ['5m edge in the hour before', T0 + 63 * MIN + 7_001],
      ['15m edge on an hour\'s first instant', T0 + 75 * MIN],
    ] as const) {
      const asOf = new Date(at);
      const run = await runPipeline(wh, { asOf });
      await expectSnapshotMatchesIndependent(wh.db, wh.layout, run.manifest.snapshot, what);
      await expectShortBreakdowns(asOf, what);
    }
  }, 240_000);

  it('after more files land into today (a layered state), and copies of landed reports', async () => {
    // A layer appended to today's states, whose cut hours (asOf's own among them) come from its report files.
    const more = denseReports(2, T0 + 40 * MIN, T0 + 90 * MIN, 'b');
    const copies = denseReports(1, T0 - 50 * MIN, T0 + 85 * MIN, 'a').filter((_, i) => i % 7 === 0);
    await land([...more, ...copies], 'b.parquet');
    const asOf = new Date(T0 + 86 * MIN + 500);
    const run = await runPipeline(wh, { asOf });
    expect(run.manifest.combine!.layeredStatesCut, 'the cut hours read from layers').toBeGreaterThan(0);
    await expectSnapshotMatchesIndependent(wh.db, wh.layout, run.manifest.snapshot, 'layered');
    await expectShortBreakdowns(asOf, 'layered');
  }, 240_000);
});
