// The background merge of layers (warehouse/publish/layer-merge.ts): a run's own build merges only small
// trailing layers (INLINE_MERGE_MAX_REPORTS together); compaction merges the larger ones. Which
// layers are due (hand-worked), and on real layered states: the figures after a merge equal those
// before it, a from-scratch run and the independent SQL over the raw files; a run that adds a layer
// while a merge is under way keeps its layer on top; a state built whole meanwhile drops the merge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, tempDir, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { runCompaction } from '../../jobs/compaction/compact.ts';
import { listFiles } from '../../lib/fsx.ts';
import { readStates, stateFiles, type LayerMeta, type StateMeta } from '../../warehouse/states/state-store.ts';
import { layersDueForMerge, mergePartitionLayers } from '../../warehouse/publish/layer-merge.ts';
import { INLINE_MERGE_MAX_REPORTS, inlineMergeMaxReports, layerPieces, layersInTsOrder } from '../../warehouse/states/layered-state.ts';
import { fixtureArgv } from '../helpers/fixtures.ts';
import { seededRandom } from '../helpers/random.ts';
import { keepEnv } from '../helpers/env.ts';

const layer = (reports: number): LayerMeta => ({ layerId: `l${reports}`, builtAt: '', reports, maxTs: null, hourRows: 0 });
const sizes = (ls: LayerMeta[]) => ls.map((l) => l.reports);

describe('layersDueForMerge', () => {
  it('takes the trailing run whose sizes do not double going back, leaving the newest layers a build may still merge', () => {
    const K = INLINE_MERGE_MAX_REPORTS;
    // 4K, 3K, 2K | K/2 (a build's own merge may take it): 2K then 3K (≤ 2 × 2K), then 4K (≤ 2 × 5K).
    expect(sizes(layersDueForMerge([layer(4 * K), layer(3 * K), layer(2 * K), layer(K / 2)]))).toEqual([4 * K, 3 * K, 2 * K]);
    // Sizes that double going back: nothing due.
    expect(sizes(layersDueForMerge([layer(8 * K), layer(3 * K), layer(K), layer(K / 2)]))).toEqual([]);
    // The merged layer stays within the given bound (1,000,000): 600,000 is left out.
    expect(sizes(layersDueForMerge([layer(600_000), layer(300_000), layer(200_000), layer(200_000)], 1_000_000))).toEqual([300_000, 200_000, 200_000]);
    // Within MAX_MERGED_LAYER_REPORTS (16,000,000), the default, it is not: the sizes do not double.
    expect(sizes(layersDueForMerge([layer(600_000), layer(300_000), layer(200_000), layer(200_000)]))).toEqual([600_000, 300_000, 200_000, 200_000]);
    // 2M then 3M (≤ 2 × 2M), 4M (≤ 2 × 5M); 10M (≤ 2 × 9M) would make 19M, past the bound.
    expect(sizes(layersDueForMerge([layer(10_000_000), layer(4_000_000), layer(3_000_000), layer(2_000_000)]))).toEqual([4_000_000, 3_000_000, 2_000_000]);
    // Small layers only: a build's own merge takes them.
    expect(layersDueForMerge([layer(1000), layer(1000), layer(1000)])).toEqual([]);
    expect(layersDueForMerge([layer(5 * K)])).toEqual([]);
  });

  it('keeps the merged layer within LAYER_MERGE_MAX_REPORTS when given a smaller one', () => {
    const due = [layer(300_000), layer(120_000), layer(100_000), layer(70_000)];
    expect(sizes(layersDueForMerge(due))).toEqual([300_000, 120_000, 100_000, 70_000]);
    // 250,000: 70,000 + 100,000 fit, 120,000 more would not.
    expect(sizes(layersDueForMerge(due, 250_000))).toEqual([100_000, 70_000]);
  });
});

const DAY = '2026-11-24';
const BASE = new Date(`${DAY}T00:00:00Z`);
const HOUR = 3_600_000;
const at = (hours: number) => new Date(BASE.getTime() + hours * HOUR);

/**
 * Past the hand-worked cases, a build's own merge takes at most INLINE_DIVISOR times fewer reports
 * than its default (P2PTEL_TEST_INLINE_MERGE_MAX_REPORTS, lib/config.ts), and the batches hold that
 * many times fewer: the same layers, merges and kills, at a sixteenth of the data.
 */
const INLINE_DIVISOR = 16;
const INLINE_MAX_ENV = 'P2PTEL_TEST_INLINE_MERGE_MAX_REPORTS';
const restoreEnv = keepEnv(INLINE_MAX_ENV);

let pool: TestWarehouse;
let wh: TestWarehouse;
/** The pool's files of batch g, by g. */
const batches = new Map<number, string[]>();
/**
 * A handful of reports landed and run first: a day without a state is built whole (as a full run
 * builds it), the next run that adds to it makes its layered state; after the primer, each batch's
 * run makes a layer (the first one holding the primer too).
 */
let primer: string[] = [];

beforeAll(async () => {
  pool = await openTestWarehouse();
  // No compaction of small files here: only layer merges.
  wh = await openTestWarehouse({ COMPACTION_MIN_FILES: '1000' });
  const before = new Set(await listFiles(pool.layout.rawReports, '.parquet'));
  await generateReports(pool.db, pool.layout, { customers: ['acme'], streams: 1, sessions: 2, start: at(0), hours: 0.1, seed: 899 });
  primer = (await listFiles(pool.layout.rawReports, '.parquet')).filter((f) => !before.has(f));
  // Batches larger than a build's own merge may take: each run adds a layer of its own.
  for (let g = 0; g < 8; g++) {
    const before = new Set(await listFiles(pool.layout.rawReports, '.parquet'));
    await generateReports(pool.db, pool.layout, { customers: ['acme'], streams: 3, sessions: Math.ceil(1500 / INLINE_DIVISOR), start: at(g * 0.5), hours: 0.5, seed: 900 + g });
    batches.set(g, (await listFiles(pool.layout.rawReports, '.parquet')).filter((f) => !before.has(f)));
  }
}, 180_000);

afterAll(async () => {
  restoreEnv();
  await pool?.close();
  await wh?.close();
});

async function land(g: number | 'primer', into: TestWarehouse = wh): Promise<void> {
  for (const from of g === 'primer' ? primer : batches.get(g)!) {
    const to = path.join(into.layout.rawReports, path.relative(pool.layout.rawReports, from));
    await fs.mkdir(path.dirname(to), { recursive: true });
    await fs.copyFile(from, to);
  }
}

const newest = async (): Promise<StateMeta> => (await readStates(wh.layout)).get(`acme/${DAY}`)![0]!;

/** The published snapshot equals a from-scratch run over the same files and the independent SQL. */
async function expectExact(snapshot: string, asOf: Date, what: string): Promise<void> {
  const ours = await snapshotRows(wh.db, wh.layout, snapshot);
  const scratch = await runPipeline(wh, { asOf, rebuild: true, replaceCurrent: true, compact: false });
  expectSameSnapshotRows(ours, await snapshotRows(wh.db, wh.layout, scratch.manifest.snapshot), what);
  await expectSnapshotMatchesIndependent(wh.db, wh.layout, snapshot, what);
}

/**
 * A merged layer's files are those a build would make of its reports: its pieces (regrouped from
 * the merged layers' pieces) equal layer_pieces.sql's and layer_sessions.sql's over its reports
 * file, row for row, and that file holds its reports by ts.
 */
async function expectPiecesOfItsReports(state: StateMeta, l: LayerMeta, on: TestWarehouse = wh): Promise<void> {
  const f = stateFiles(on.layout, state).layer(l.layerId);
  await on.db.withSession(async (s) => {
    await s.run(`CREATE OR REPLACE TEMP TABLE layer_rows AS SELECT * FROM read_parquet('${f.reports}', hive_partitioning = false)`);
    expect(Number((await s.one<{ n: bigint }>('SELECT count(*) AS n FROM layer_rows')).n)).toBe(l.reports);
    const unordered = await s.one<{ n: bigint }>(
      `SELECT count(*) AS n FROM (SELECT ts < lag(ts) OVER (ORDER BY file_row_number) AS back FROM read_parquet('${f.reports}', hive_partitioning = false, file_row_number = true)) WHERE back`,
    );
    expect(Number(unordered.n), 'reports out of ts order').toBe(0);
    await layerPieces(s);
    // The slots file is sorted by slot; layer_slots is not, and EXCEPT ALL compares as multisets.
    for (const [table, file] of [['layer_hours', f.hours], ['layer_minutes', f.minutes], ['layer_sessions', f.sessions], ['layer_slots', f.slots]] as const) {
      const r = await s.one<{ missing: bigint; extra: bigint; n: bigint }>(
        `SELECT (SELECT count(*) FROM (SELECT * FROM ${table} EXCEPT ALL SELECT * FROM read_parquet('${file}', hive_partitioning = false))) AS missing,
                (SELECT count(*) FROM (SELECT * FROM read_parquet('${file}', hive_partitioning = false) EXCEPT ALL SELECT * FROM ${table})) AS extra,
                (SELECT count(*) FROM ${table}) AS n`,
      );
      expect([Number(r.missing), Number(r.extra)], `${table} of the merged layer against its reports'`).toEqual([0, 0]);
      expect(Number(r.n)).toBeGreaterThan(0);
    }
    expect(l.hourRows).toBe(Number((await s.one<{ n: bigint }>('SELECT count(*) AS n FROM layer_hours')).n));
    expect(l.slotRows).toBe(Number((await s.one<{ n: bigint }>('SELECT count(*) AS n FROM layer_slots')).n));
    const slotsOutOfOrder = await s.one<{ n: bigint }>(
      `SELECT count(*) AS n FROM (SELECT start_us < lag(start_us) OVER (ORDER BY file_row_number) AS back FROM read_parquet('${f.slots}', hive_partitioning = false, file_row_number = true)) WHERE back`,
    );
    expect(Number(slotsOutOfOrder.n), 'slot pieces out of slot order').toBe(0);
    await s.run('DROP TABLE layer_rows; DROP TABLE layer_hours; DROP TABLE layer_minutes; DROP TABLE layer_sessions; DROP TABLE layer_slots');
  });
}

describe('layer merges by compaction', () => {
  // From here to the file's end (the hand-worked cases above at the default).
  beforeAll(() => {
    process.env[INLINE_MAX_ENV] = String(INLINE_MERGE_MAX_REPORTS / INLINE_DIVISOR);
  });

  it('merge the layers a build leaves, with the figures exact, a layer added meanwhile kept on top, and a whole rebuild dropping the merge', async () => {
    const merge = (runId: string, beforeCommit: () => Promise<void>) =>
      wh.db.withSession((s) => mergePartitionLayers({ s, layout: wh.layout, log: wh.log, runId, lockStaleMs: 60_000, beforeCommit }, { customerId: 'acme', date: DAY }));
    await land('primer');
    await runPipeline(wh, { asOf: at(0.1), compact: false });
    expect((await newest()).layers, 'a day without a state is built whole').toBeUndefined();
    for (const g of [0, 1]) {
      await land(g);
      await runPipeline(wh, { asOf: at(g * 0.5 + 0.5), compact: false });
    }
    // Each batch over the inline limit: a layer each, none merged by the runs.
    const two = await newest();
    expect(sizes(two.layers!).every((n) => n > inlineMergeMaxReports())).toBe(true);
    expect(two.layers!.length).toBe(2);
    expect(layersDueForMerge(two.layers!).length).toBe(2);

    // A state built whole (a full run's, not layered) while a merge is under way: the merge is dropped.
    const dropped = await merge('test-merge-dropped', async () => void (await runPipeline(wh, { asOf: at(1), rebuild: true, replaceCurrent: true, compact: false })));
    expect(dropped).toBeNull();
    expect((await newest()).layers).toBeUndefined();

    // Compaction merges what is due: the layer of every file so far (the next run's, on the
    // whole state) and two more, into one.
    for (const g of [2, 3, 4]) {
      await land(g);
      await runPipeline(wh, { asOf: at(g * 0.5 + 0.5), compact: false });
    }
    const three = await newest();
    expect(three.layers!.length).toBe(3);
    expect(layersInTsOrder(three.layers!), 'batches land in time order').toBe(true);
    const unmerged = await snapshotRows(wh.db, wh.layout, (await runPipeline(wh, { asOf: at(2.5), compact: false, replaceCurrent: true })).manifest.snapshot);
    const c = await runCompaction(wh);
    expect(c.failed).toBe(0);
    expect(c.merged.map((m) => [m.partition, m.layers])).toEqual([[`acme/${DAY}`, 3]]);
    const one = await newest();
    expect(one.made).toBe('merged');
    expect(one.layers!.length).toBe(1);
    expect(one.layers![0]!.reports).toBe(three.layers!.reduce((a, l) => a + l.reports, 0));
    expect(one.files).toEqual(three.files);
    await expectPiecesOfItsReports(one, one.layers![0]!);
    // The next run reuses the merged state (the same files), and its figures are those of the
    // unmerged layers (exact: checked below, after the next merge).
    const run = await runPipeline(wh, { asOf: at(2.5), compact: false, replaceCurrent: true });
    expect(run.manifest.partitionStates!.rebuilt).toBe(0);
    expectSameSnapshotRows(await snapshotRows(wh.db, wh.layout, run.manifest.snapshot), unmerged, 'after compaction merged layers');

    // A run while a merge is under way (after its files are written, before it commits): the run's
    // new layer stays on top of the merged one.
    for (const g of [5, 6]) {
      await land(g);
      await runPipeline(wh, { asOf: at(g * 0.5 + 0.5), compact: false });
    }
    const before = await newest();
    const due = layersDueForMerge(before.layers!);
    expect(due.length).toBeGreaterThanOrEqual(2);
    await land(7);
    const merged = await merge('test-merge-meanwhile', async () => void (await runPipeline(wh, { asOf: at(4), compact: false })));
    expect(merged!.layers).toBe(due.length);
    const after = await newest();
    expect(after.made).toBe('merged');
    expect(after.layers!.length).toBe(before.layers!.length - due.length + 2);
    expect(after.layers![after.layers!.length - 1]!.reports).toBeGreaterThan(inlineMergeMaxReports());
    expect(after.layers!.slice(0, -1).some((l) => due.some((d) => d.layerId === l.layerId))).toBe(false);
    await expectPiecesOfItsReports(after, after.layers!.find((l) => !before.layers!.some((b) => b.layerId === l.layerId))!);
    const last = await runPipeline(wh, { asOf: at(4), compact: false, replaceCurrent: true });
    expect(last.manifest.partitionStates!.rebuilt).toBe(0);
    await expectExact(last.manifest.snapshot, at(4), 'after a merge with a run meanwhile');
  }, 300_000);
});

/**
 * Batch g's reports of one side of `split` (before it, or from it on) landed as files of their own:
 * a session of the batch that reports on both sides is in two layers.
 */
async function landSide(g: number, split: Date, side: 'before' | 'after', into: TestWarehouse): Promise<void> {
  for (const from of batches.get(g)!) {
    const to = path.join(into.layout.rawReports, path.relative(pool.layout.rawReports, from)).replace(/\.parquet$/, `-${side}.parquet`);
    await fs.mkdir(path.dirname(to), { recursive: true });
    const cond = side === 'before' ? '<' : '>=';
    await into.db.withSession((s) =>
      s.run(`COPY (SELECT * FROM read_parquet('${from}', hive_partitioning = false) WHERE ts ${cond} TIMESTAMP '${split.toISOString().replace('T', ' ').replace('Z', '')}') TO '${to}' (FORMAT parquet)`),
    );
  }
}

describe('a merge of layers that share sessions', () => {
  // Half a batch is a layer of its own, not one that a build may still merge.
  beforeAll(() => {
    process.env[INLINE_MAX_ENV] = String(INLINE_MERGE_MAX_REPORTS / (4 * INLINE_DIVISOR));
  });
  afterAll(() => {
    process.env[INLINE_MAX_ENV] = String(INLINE_MERGE_MAX_REPORTS / INLINE_DIVISOR);
  });

  it('regroups their pieces: the merged pieces those of its reports, the figures exact', async () => {
    const own = await openTestWarehouse({ COMPACTION_MIN_FILES: '1000' });
    try {
      await land('primer', own);
      await runPipeline(own, { asOf: at(0.1), compact: false });
      // Batch 0 (half an hour) in two layers, split a quarter hour in: its sessions that play
      // across the split have pieces in both, of the same hour, the same minutes and buckets. The
      // later reports land first, so that the layers' reports interleave in time (the merged file
      // is sorted; the merges of the test above take layers in time order, one file after the other).
      await landSide(0, at(0.25), 'after', own);
      await runPipeline(own, { asOf: at(0.5), compact: false });
      await landSide(0, at(0.25), 'before', own);
      await runPipeline(own, { asOf: at(0.5), compact: false });
      const state = async () => (await readStates(own.layout)).get(`acme/${DAY}`)![0]!;
      const before = await state();
      expect(before.layers!.length).toBe(2);
      expect(layersInTsOrder(before.layers!)).toBe(false);
      const shared = await own.db.withSession((s) =>
        s.one<{ n: bigint }>(
          `SELECT count(*) AS n FROM (SELECT streamId, sessionId FROM read_parquet(${JSON.stringify(before.layers!.map((l) => stateFiles(own.layout, before).layer(l.layerId).hours)).replaceAll('"', "'")}, hive_partitioning = false, filename = true) GROUP BY ALL HAVING count(DISTINCT filename) = 2)`,
        ),
      );
      expect(Number(shared.n), 'sessions in both layers').toBeGreaterThan(10);
      const asOf = at(0.5);
      const unmerged = await snapshotRows(own.db, own.layout, (await runPipeline(own, { asOf, compact: false, replaceCurrent: true })).manifest.snapshot);
      const merged = await own.db.withSession((s) => mergePartitionLayers({ s, layout: own.layout, log: own.log, runId: 'test-merge-shared', lockStaleMs: 60_000 }, { customerId: 'acme', date: DAY }));
      expect(merged!.layers).toBe(2);
      const after = await state();
      expect(after.layers!.length).toBe(1);
      await expectPiecesOfItsReports(after, after.layers![0]!, own);
      const run = await runPipeline(own, { asOf, compact: false, replaceCurrent: true });
      expect(run.manifest.partitionStates!.rebuilt).toBe(0);
      expectSameSnapshotRows(await snapshotRows(own.db, own.layout, run.manifest.snapshot), unmerged, 'after merging layers that share sessions');
      await expectSnapshotMatchesIndependent(own.db, own.layout, run.manifest.snapshot, 'after merging layers that share sessions');
    } finally {
      await own.close();
    }
  }, 300_000);
});

describe('a layer merge killed at any moment', () => {
  it('leaves the newest state as it was or merged whole, the figures those of the unmerged layers', async () => {
    // A warehouse of its own: four layers due for a merge.
    const own = await openTestWarehouse({ COMPACTION_MIN_FILES: '1000' });
    try {
      await land('primer', own);
      await runPipeline(own, { asOf: at(0.1), compact: false });
      for (const g of [0, 1, 2, 3]) {
        await land(g, own);
        await runPipeline(own, { asOf: at(g * 0.5 + 0.5), compact: false });
      }
      const asOf = at(2);
      const state = async () => (await readStates(own.layout)).get(`acme/${DAY}`)![0]!;
      const before = await state();
      expect(layersDueForMerge(before.layers!).length).toBe(4);
      const reference = await snapshotRows(own.db, own.layout, (await runPipeline(own, { asOf, compact: false, replaceCurrent: true })).manifest.snapshot);
      const mergeRun = async (root: string, killAfterMs: number) => {
        const child = spawn(process.execPath, fixtureArgv('merge-run.ts', root, 'acme', DAY, String(killAfterMs)), { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
        return { out, signal };
      };
      // How long the merge takes here: one left to finish on a copy of the warehouse.
      const copy = await tempDir('p2ptel-merge-timing-');
      await fs.cp(own.root, copy, { recursive: true });
      const timed = await mergeRun(copy, 600_000);
      await fs.rm(copy, { recursive: true, force: true });
      const mergeMs = Number(/DONE (\d+)/.exec(timed.out)?.[1]);
      expect(mergeMs, timed.out).toBeGreaterThan(0);
      const random = seededRandom(31);
      let killed = 0;
      for (let k = 0; k < 8; k++) {
        // Killed anywhere in the merge's time, before it starts, during it or while it commits:
        // attempt k in the k-th eighth of 1.2 × that time, the first ones surely before it ends.
        const { out, signal } = await mergeRun(own.root, Math.floor(((k + random()) / 8) * 1.2 * mergeMs));
        if (signal === 'SIGKILL') killed++;
        else expect(out, 'a merge that was not killed finished').toMatch(/DONE|NOTHING/);
        const now = await state();
        const reports = (m: StateMeta) => m.layers!.reduce((a, l) => a + l.reports, 0);
        // As it was, or merged whole: never half a merge, never a report lost or doubled.
        expect(now.stateId === before.stateId || (now.made === 'merged' && now.layers!.length === 1), `attempt ${k}`).toBe(true);
        expect(reports(now)).toBe(reports(before));
        const run = await runPipeline(own, { asOf, compact: false, replaceCurrent: true });
        expectSameSnapshotRows(await snapshotRows(own.db, own.layout, run.manifest.snapshot), reference, `attempt ${k}`);
        if (now.made === 'merged') break;
      }
      expect(killed).toBeGreaterThan(0);
      // Whatever the kills left, a compaction finishes the merge (its scratch folders are debris).
      await runCompaction(own);
      expect((await state()).layers!.length).toBe(1);
      const last = await runPipeline(own, { asOf, compact: false, replaceCurrent: true });
      expectSameSnapshotRows(await snapshotRows(own.db, own.layout, last.manifest.snapshot), reference, 'after the compaction');
    } finally {
      await own.close();
    }
  }, 300_000);
});
