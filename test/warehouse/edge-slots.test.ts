// The hour a window edge cuts, read from a layered state's slot pieces (layer_pieces.sql
// `layer_slots`, window-pieces.ts layeredEdgePieces): the edge's 5-minute slot report by report,
// the hour's other slots as pieces. Hand-made reports sit on the slots' bounds (a slot's first
// instant, its last microsecond, the hour's first instant), a session's dimensions change within
// the hour, late reports land into the cut hour after it ended, and the runs put the 1h edge on a
// slot's first instant, just before the next slot and mid-slot. Each snapshot equals a
// from-scratch run over the same files and the independent SQL over the raw files. A layer made
// before layers had slot pieces is read report by report, and a merge regroups slot pieces
// (or groups the merged reports, for such a layer) into what its reports give.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, tempDir, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { readStates, stateFiles, type LayerMeta, type StateMeta } from '../../warehouse/states/state-store.ts';
import { layerPieces, writeMergedLayerFiles } from '../../warehouse/states/layered-state.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { keepEnv } from '../helpers/env.ts';

const DAY = '2026-11-24';
/** An instant of DAY as ISO with microseconds, `hms` HH:MM:SS[.ffffff] (so that instants compare as strings). */
const t = (hms: string) => `${DAY}T${hms.includes('.') ? hms.padEnd(15, '0') : `${hms}.000000`}Z`;
const ms = (hms: string) => Date.parse(t(hms));
/** The instant `seconds` after `from` (an ISO instant of t's form, whole milliseconds), in t's form. */
const plus = (from: string, seconds: number) => new Date(Date.parse(from) + seconds * 1000).toISOString().replace('Z', '000Z');

let wh: TestWarehouse;
/** The same files, each check's from-scratch run (so that `wh`'s layers, and its slot units, live on from run to run). */
let scratch: TestWarehouse;
const reports: HandReport[] = [];
/** A build merges no trailing layer into its new one (lib/config.ts): each landing below a layer of its own. */
const INLINE_MAX_ENV = 'P2PTEL_TEST_INLINE_MERGE_MAX_REPORTS';
const restoreEnv = keepEnv(INLINE_MAX_ENV);

function session(streamId: string, sessionId: string, times: string[], extra: (i: number, ts: string) => Partial<HandReport> = () => ({})): void {
  times.forEach((ts, i) =>
    reports.push({
      reportId: `${sessionId}-${i}`,
      sessionId,
      streamId,
      ts,
      seq: i,
      startupMs: i === 0 ? 900 + sessionId.length * 100 : null,
      bytesOffloaded: 1000 + i * 7,
      bytesFallback: 500 + (i % 3) * 11,
      peerCount: i % 4 === 3 ? null : i % 5,
      bufferHealth: i % 6 === 5 ? null : (i % 7) * 1.25,
      stallCount: i % 9 === 4 ? 1 : 0,
      stallMs: i % 9 === 4 ? 750 : 0,
      p2pConnAttempts: 3,
      p2pConnSuccesses: i % 3,
      final: i === times.length - 1,
      ...extra(i, ts),
    }),
  );
}

const every = (from: string, seconds: number, n: number) => Array.from({ length: n }, (_, i) => plus(from, i * seconds));

beforeAll(async () => {
  process.env[INLINE_MAX_ENV] = '1';
  wh = await openTestWarehouse({ COMPACTION_MIN_FILES: '1000' });
  scratch = await openTestWarehouse();
  session('acme:one', 'P', [t('08:00:00')]);
  // Every 30 s from the hour's first instant to 11:29:30, on a mobile device from 10:20 on.
  session('acme:one', 'A', every(t('10:00:00'), 30, 180), (_, ts) => ({ device: ts >= t('10:20:00') ? 'mobile' : 'desktop', region: 'eu-west' }));
  // On the slots' bounds: a slot's first instant, its last microsecond, the next one's first.
  session('acme:one', 'B', [t('10:05:00'), t('10:09:59.999999'), t('10:10:00'), t('10:15:00.000001'), t('10:37:30.5')], (i) => ({
    region: i < 2 ? 'us-east' : 'ap-south',
  }));
  session('acme:two', 'C', every(t('10:07:30'), 45, 120), (i) => ({ cohort: i % 2 === 0 ? 'p2p' : 'control' }));
  // Late: these land after the hour ended, into the hour the edge cuts.
  session('acme:two', 'D', every(t('10:55:00'), 20, 15), () => ({ device: 'tv' }));
  session('acme:two', 'E', [t('10:59:59.999999'), t('11:00:00'), t('11:00:00.000001')]);
  session('acme:one', 'F', every(t('11:30:00'), 30, 80), (i) => ({ device: i < 30 ? 'desktop' : 'mobile' }));
}, 60_000);

afterAll(async () => {
  restoreEnv();
  await wh?.close();
  await scratch?.close();
});

let fileNo = 0;
/** Lands the reports with lo <= ts < hi (ISO strings compare as instants here), those of `sessions` only when given. */
async function land(lo: string, hi: string, sessions?: string[]): Promise<number> {
  const rows = reports.filter((r) => r.ts >= lo && r.ts < hi && (sessions === undefined || sessions.includes(r.sessionId)) && (sessions !== undefined || r.sessionId !== 'D'));
  const name = `hand-${String(fileNo++).padStart(2, '0')}.parquet`;
  for (const into of [wh, scratch]) await writeReportsParquet(into.db, path.join(into.layout.rawReports, 'customer=acme', `date=${DAY}`, name), rows);
  return rows.length;
}

async function expectExact(asOf: Date, what: string): Promise<void> {
  const run = await runPipeline(wh, { asOf, compact: false });
  const ours = await snapshotRows(wh.db, wh.layout, run.manifest.snapshot);
  const whole = await runPipeline(scratch, { asOf, rebuild: true, replaceCurrent: true, compact: false });
  expectSameSnapshotRows(ours, await snapshotRows(scratch.db, scratch.layout, whole.manifest.snapshot), what);
  await expectSnapshotMatchesIndependent(wh.db, wh.layout, run.manifest.snapshot, what);
}

const newest = async (): Promise<StateMeta> => (await readStates(wh.layout)).get(`acme/${DAY}`)![0]!;

/** The slots file of `l` against layer_pieces.sql's `layer_slots` over its reports file: the same rows, sorted by slot. */
async function expectSlotsOfItsReports(reportsFile: string, slotsFile: string, slotRows: number | undefined): Promise<void> {
  await wh.db.withSession(async (s) => {
    await s.run(`CREATE OR REPLACE TEMP TABLE layer_rows AS SELECT * FROM read_parquet(${quotedString(reportsFile)}, hive_partitioning = false)`);
    await layerPieces(s);
    const f = `read_parquet(${quotedString(slotsFile)}, hive_partitioning = false)`;
    const r = await s.one<{ missing: bigint; extra: bigint; n: bigint; back: bigint }>(
      `SELECT (SELECT count(*) FROM (SELECT * FROM layer_slots EXCEPT ALL SELECT * FROM ${f})) AS missing,
              (SELECT count(*) FROM (SELECT * FROM ${f} EXCEPT ALL SELECT * FROM layer_slots)) AS extra,
              (SELECT count(*) FROM layer_slots) AS n,
              (SELECT count(*) FROM (SELECT start_us < lag(start_us) OVER (ORDER BY file_row_number) AS back
                 FROM read_parquet(${quotedString(slotsFile)}, hive_partitioning = false, file_row_number = true)) WHERE back) AS back`,
    );
    expect([Number(r.missing), Number(r.extra), Number(r.back)]).toEqual([0, 0, 0]);
    expect(Number(r.n)).toBeGreaterThan(0);
    expect(slotRows).toBe(Number(r.n));
    await s.run('DROP TABLE layer_rows; DROP TABLE layer_hours; DROP TABLE layer_minutes; DROP TABLE layer_sessions; DROP TABLE layer_slots');
  });
}

describe('the hour a window edge cuts, from slot pieces', () => {
  it('equals a from-scratch run with the edge on a slot bound, before one and mid-slot, late reports landed into the cut hour', async () => {
    await land(t('00:00:00'), t('09:00:00'));
    await runPipeline(wh, { asOf: new Date(ms('09:30:00')), compact: false });
    expect((await newest()).layers, 'the day is built whole at first').toBeUndefined();
    await land(t('09:00:00'), t('10:20:00'));
    await runPipeline(wh, { asOf: new Date(ms('10:21:00')), compact: false });
    await land(t('10:20:00'), t('11:00:00'));
    await runPipeline(wh, { asOf: new Date(ms('11:00:30')), compact: false });
    // Late reports of the cut hour, and the next ten minutes (those after asOf are held back).
    await land(t('10:55:00'), t('11:00:00'), ['D']);
    await land(t('11:00:00'), t('11:10:00'));
    const layered = await newest();
    expect(layered.layers!.length).toBeGreaterThan(1);
    expect(layered.layers!.every((l) => (l.slotRows ?? 0) > 0)).toBe(true);

    // The 1h edge on slot 1's first instant (B has a report there: at the edge, so before it).
    await expectExact(new Date(ms('11:05:00')), 'edge on a slot bound');
    // Just before slot 2 (B's 10:09:59.999999 lies after the edge), then on slot 2's first instant.
    await expectExact(new Date(ms('11:09:59.999')), 'edge a millisecond before a slot');
    await expectExact(new Date(ms('11:10:00')), 'edge on the next slot');
    // A layer of reports after the cut hour, the edge still in slot 2: the slot unit is kept (only
    // the new layer's own unit is grouped), and the figures are exact.
    await land(t('11:10:00'), t('11:12:00'));
    const kept = await runPipeline(wh, { asOf: new Date(ms('11:12:00')), compact: false });
    expect(kept.manifest.combine!.classUnitsComputed, 'units grouped by a run that adds a layer after the cut hour').toBe(1);
    await expectExact(new Date(ms('11:12:00')), 'a layer after the cut hour');
    await land(t('11:12:00'), t('11:40:00'));
    await expectExact(new Date(ms('11:37:30.500')), 'edge mid-slot, on a report');
    await expectExact(new Date(ms('11:59:59.998')), 'edge in the last slot');
  });

  it('reads a layer without slot pieces report by report, and a merge gives the slot pieces of its reports', async () => {
    await land(t('11:40:00'), t('12:10:00'));
    await runPipeline(wh, { asOf: new Date(ms('12:05:00')), compact: false });
    const state = await newest();
    const files = stateFiles(wh.layout, state);
    expect(state.layers!.length).toBeGreaterThan(1);
    // Each layer's slots file is what its reports give.
    for (const l of state.layers!) await expectSlotsOfItsReports(files.layer(l.layerId).reports, files.layer(l.layerId).slots, l.slotRows);

    // Merged, from the layers' slot pieces and, with the first layer as one made before layers had
    // them, from the merged reports.
    const old: LayerMeta = { ...state.layers![0]!, slotRows: undefined };
    for (const layers of [state.layers!, [old, ...state.layers!.slice(1)]]) {
      const dir = await tempDir('p2ptel-slots-merge-');
      const to = stateFiles(wh.layout, { customerId: 'acme', date: DAY, stateId: path.basename(dir) }).layer('merged');
      const into = { ...to, ...Object.fromEntries(Object.entries(to).map(([k, v]) => [k, path.join(dir, path.basename(v))])) } as typeof to;
      const merged = await wh.db.withSession((s) => writeMergedLayerFiles(s, layers, layers.map((l) => files.layer(l.layerId)), into, 'merged'));
      await expectSlotsOfItsReports(into.reports, into.slots, merged.slotRows);
      await fs.rm(dir, { recursive: true, force: true });
    }

    // The newest state as if its first layer had been made before slot pieces: its meta without
    // slotRows and no slots file. The cut hour is read from it report by report.
    const metaFile = files.meta;
    const meta = JSON.parse(await fs.readFile(metaFile, 'utf8')) as StateMeta;
    delete meta.layers![0]!.slotRows;
    await fs.rm(files.layer(meta.layers![0]!.layerId).slots);
    await fs.writeFile(metaFile, JSON.stringify(meta));
    const run = await runPipeline(wh, { asOf: new Date(ms('12:07:30')), compact: false });
    const ours = await snapshotRows(wh.db, wh.layout, run.manifest.snapshot);
    await expectSnapshotMatchesIndependent(wh.db, wh.layout, run.manifest.snapshot, 'a layer without slot pieces');
    const whole = await runPipeline(scratch, { asOf: new Date(ms('12:07:30')), rebuild: true, replaceCurrent: true, compact: false });
    expectSameSnapshotRows(ours, await snapshotRows(scratch.db, scratch.layout, whole.manifest.snapshot), 'a layer without slot pieces');
  });
});
