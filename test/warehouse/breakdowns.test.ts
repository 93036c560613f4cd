// Breakdowns by session dimension, as a property: random small data sets with every dimension
// (nulls, sessions changing device mid-way, duplicates across files, a late file, sessions across
// every window edge, asOf inside an hour), every `by` × filters × window × scope, from the
// snapshot's session classes (the code path of the API) against independent SQL over the raw
// files (test/helpers/independent.ts). Also: the stream quality rows, and a breakdown without
// filters or `by` equal to the stream summaries to the last digit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameRows, Independent, type IndependentFilters, type Row } from '../helpers/independent.ts';
import { breakdownData, landBreakdownFiles } from '../helpers/breakdown-data.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshot-read.ts';
import { sessionClassFiles, snapshotFiles } from '../../warehouse/snapshots.ts';
import { quotedString } from '../../warehouse/sql-files.ts';
import { BREAKDOWN_DIMENSIONS, queryBreakdown, sessionClassesRelation, type BreakdownFilters, type SessionDimension } from '../../warehouse/breakdowns.ts';
import { WINDOW_NAMES, type WindowName } from '../../warehouse/windows.ts';

const CUSTOMERS = ['ac', 'acme', 'globex'];
const AS_OF = new Date('2026-11-20T11:37:13Z');
const LATER = new Date(AS_OF.getTime() + 7 * 60_000);

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

const FILTER_CASES: IndependentFilters[] = [
  {},
  { device: { keep: ['mobile', null], drop: [] } },
  { region: { keep: [], drop: ['eu-west'] }, cohort: { keep: ['p2p'], drop: [] } },
  { sdkVersion: { keep: ['3.2.1', '3.3.0'], drop: ['3.3.0'] }, contentType: { keep: [], drop: [null] } },
];

const typed = (f: IndependentFilters): BreakdownFilters => new Map(Object.entries(f).map(([d, v]) => [d as SessionDimension, v]));

/** Our breakdown, read as the API reads it: the files of the customers in scope. */
async function ours(asOf: Date, window: WindowName, by: SessionDimension | null, filters: IndependentFilters, scope: { customer?: string; streamId?: string }): Promise<Row[]> {
  const snap = (await currentSnapshot(wh.layout))!;
  expect(snap.manifest.asOf).toBe(asOf.toISOString());
  const files = snapshotFiles(snap.dir);
  const customers = scope.customer ? [scope.customer] : scope.streamId ? [scope.streamId.split(':')[0]!] : snap.manifest.partitions.map((p) => p.customerId);
  return wh.db.withSession((s) =>
    queryBreakdown(s, sessionClassesRelation(sessionClassFiles(files, customers)), { window, streamId: scope.streamId ?? null, by, filters: typed(filters) }),
  );
}

async function expectBreakdownsMatch(asOf: Date, what: string): Promise<void> {
  const ind = await Independent.create(wh.db, wh.layout.rawReports, asOf);
  for (const window of WINDOW_NAMES) {
    for (const by of [null, ...BREAKDOWN_DIMENSIONS]) {
      for (const [i, filters] of FILTER_CASES.entries()) {
        const theirs = await ind.breakdown(window, { by, filters });
        const mine = await ours(asOf, window, by, filters, {});
        expectSameRows(mine, theirs, `${what} ${window} by ${by} filters #${i}`);
        expect(mine.map((r) => r['value'])).toEqual(theirs.map((r) => r['value']));
      }
    }
    for (const scope of [{ customer: 'ac' }, { customer: 'acme' }, { streamId: 'acme:live-1' }, { streamId: 'ac:live-0' }]) {
      for (const filters of FILTER_CASES.slice(0, 2)) {
        const streams = scope.customer ? [`${scope.customer}:`] : [scope.streamId!];
        const theirs = await ind.breakdown(window, { by: 'device', filters, streams });
        expectSameRows(await ours(asOf, window, 'device', filters, scope), theirs, `${what} ${window} ${JSON.stringify(scope)}`);
      }
    }
  }
}

describe('breakdowns from the snapshot equal independent SQL over the raw reports', () => {
  it('at a first run, then after a late file and copies land', async () => {
    const data = breakdownData(7, CUSTOMERS, AS_OF);
    await landBreakdownFiles(wh, data.files);
    await runPipeline(wh, { asOf: AS_OF });
    // The data has what the rule is about: sessions that change device, and whose device in a
    // window differs from their device over all of history.
    const ind = await Independent.create(wh.db, wh.layout.rawReports, AS_OF);
    const [changing] = await ind.query(`SELECT count(*) AS n FROM (SELECT sessionId FROM ind_reports GROUP BY ALL HAVING count(DISTINCT device) > 1)`);
    expect(Number(changing!['n'])).toBeGreaterThan(3);
    await expectBreakdownsMatch(AS_OF, 'first run');
    // The hour pieces' session classes are kept per class unit (class-units.ts: the days before
    // asOf's date, each hour file of asOf's date) apart from the cut hours', and sessions cross from
    // the ones into the others: several files per customer are read.
    const first = (await currentSnapshot(wh.layout))!;
    for (const c of CUSTOMERS) expect(sessionClassFiles(snapshotFiles(first.dir), [c]).length, c).toBeGreaterThan(2);

    await landBreakdownFiles(wh, data.late, '-late');
    await runPipeline(wh, { asOf: LATER });
    await expectBreakdownsMatch(LATER, 'after the late file');
  }, 300_000);

  it('without filters or `by`, a stream equals its summary to the last digit, and its quality rows equal the independent figures', async () => {
    const snap = (await currentSnapshot(wh.layout))!;
    const asOf = new Date(snap.manifest.asOf);
    const ind = await Independent.create(wh.db, wh.layout.rawReports, asOf);
    const summaries = await readStreamSummaries(wh.db, snap);
    const quality = await wh.db.withSession((s) => s.all<Row>(`SELECT * FROM read_parquet(${quotedString(snapshotFiles(snap.dir).streamQuality)}) ORDER BY windowName, streamId`));
    expect(quality.length).toBe(summaries.length);
    for (const sum of summaries) {
      const window = sum.windowName as WindowName;
      const [row] = await ours(asOf, window, null, {}, { streamId: sum.streamId });
      for (const f of ['totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth'] as const) {
        expect(row![f], `${window} ${sum.streamId} ${f}`).toBe(sum[f]);
      }
      const q = quality.find((x) => x['windowName'] === window && x['streamId'] === sum.streamId)!;
      const [theirs] = await ind.breakdown(window, { by: null, streams: [sum.streamId] });
      expectSameRows([q], [{ rebufferEvents: theirs!['rebufferEvents'], rebufferRatio: theirs!['rebufferRatio'], startupTimeP95Ms: theirs!['startupTimeP95Ms'], p2pConnectionSuccess: theirs!['p2pConnectionSuccess'] }], `quality ${window} ${sum.streamId}`);
    }
  }, 120_000);
});
