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
import { landingPath, writeReportsParquet } from '../helpers/reports.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshots/snapshot-read.ts';
import { sessionClassFiles, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { BREAKDOWN_DIMENSIONS, queryBreakdown, sessionClassesRelation, type BreakdownFilters, type SessionDimension } from '../../warehouse/reads/breakdowns.ts';
import { WINDOW_NAMES, type WindowName } from '../../warehouse/figures/windows.ts';

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
  const classes = await classesTable(sessionClassFiles(files, customers));
  return wh.db.withSession((s) => queryBreakdown(s, classes, { window, streamId: scope.streamId ?? null, by, filters: typed(filters) }));
}

/**
 * The session classes of a list of files, read through the API's relation into a table once:
 * hundreds of breakdowns are asked of each snapshot, and each read the same files again.
 */
const classTables = new Map<string, string>();
async function classesTable(files: string[]): Promise<string> {
  const key = files.join('\n');
  let table = classTables.get(key);
  if (!table) {
    table = `ours_classes_${classTables.size}`;
    await wh.db.withSession((s) => s.run(`CREATE OR REPLACE TABLE ${table} AS SELECT * FROM ${sessionClassesRelation(files)}`));
    classTables.set(key, table);
  }
  return table;
}

async function expectBreakdownsMatch(asOf: Date, what: string, only?: { bys: (SessionDimension | null)[]; filters: IndependentFilters[]; scopes?: boolean }): Promise<void> {
  const ind = await Independent.create(wh.db, wh.layout.rawReports, asOf);
  for (const window of WINDOW_NAMES) {
    for (const by of only?.bys ?? [null, ...BREAKDOWN_DIMENSIONS]) {
      for (const [i, filters] of (only?.filters ?? FILTER_CASES).entries()) {
        const theirs = await ind.breakdown(window, { by, filters });
        const mine = await ours(asOf, window, by, filters, {});
        expectSameRows(mine, theirs, `${what} ${window} by ${by} filters #${i}`);
        expect(mine.map((r) => r['value'])).toEqual(theirs.map((r) => r['value']));
      }
    }
    if (only && !only.scopes) continue;
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
    // After the late file, the dimensions that change mid-session (a late report can change the
    // session's first device and region), every filter case and scope: the other dimensions are
    // carried by the same class rows, each checked at the first run above.
    await expectBreakdownsMatch(LATER, 'after the late file', { bys: [null, 'device', 'region'], filters: FILTER_CASES, scopes: true });
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

  it('as asOf moves over hours and days, class units whose classes stay the same are kept, and the figures stay exact', async () => {
    // The warehouse of the tests above, whose today's partitions got several layers (a first run,
    // then a late file and copies): asOf moves on by an hour (every edge crosses into another
    // hour), into the next day (today's layers become yesterday's) and by days (edges cross into
    // other days). The session classes of a class unit are kept while its signature
    // (combine-plan.ts unitSignature over the hours it holds) stays: a wrong span or signature
    // serves classes of another asOf, which the independent SQL finds.
    expect((await currentSnapshot(wh.layout))!.manifest.asOf).toBe(LATER.toISOString());
    // A customer whose only layer holds reports of 12:00–13:00: the 1h edge lies before its
    // hours an hour on, then in them (its classes must be made again, and that hour cut).
    const solo = ['12:05', '12:20', '12:30'].map((t, seq) => ({
      reportId: `solo-r${seq}`, sessionId: 'solo-s1', streamId: 'solo:live-0', ts: `2026-11-20T${t}:00.000Z`, seq, device: 'tv', bytesOffloaded: 1000 * (seq + 1), bytesFallback: 10, watchMs: 30_000,
    }));
    await writeReportsParquet(wh.db, landingPath(wh.root, 'solo', '2026-11-20', 'a.parquet'), solo);
    const bys: (SessionDimension | null)[] = [null, 'device'];
    const steps: [string, number][] = [
      ['an hour on', 63],
      ['an hour and 40 minutes on', 100],
      ['into the next day', 13 * 60],
      ['two days and 3 hours on', (2 * 24 + 3) * 60],
      ['six days and 5 hours on', (6 * 24 + 5) * 60],
    ];
    const kept: number[] = [];
    for (const [what, minutes] of steps) {
      const asOf = new Date(AS_OF.getTime() + minutes * 60_000);
      await runPipeline(wh, { asOf });
      await expectBreakdownsMatch(asOf, what, { bys, filters: FILTER_CASES.slice(0, 2) });
      const combine = (await currentSnapshot(wh.layout))!.manifest.combine!;
      kept.push(combine.classUnitsLinked! - combine.classUnitsComputed!);
    }
    // An hour on, the units of days no edge reaches, and today's layers whose hours the 1h
    // edge has passed, keep their classes (before 2026-11-27 every unit was made again).
    expect(kept[0]).toBeGreaterThan(0);
    expect(kept[1]).toBeGreaterThan(0);
  }, 300_000);
});
