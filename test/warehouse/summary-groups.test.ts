// What keeps a tick's memory from growing with the sessions of the snapshot: its stream summaries
// are made a group of customers at a time, a customer of many session-class rows split by stream
// (snapshot-summaries.ts), and the raw reports of the hours that window edges newly cut are loaded
// a batch of states at a time (window-pieces.ts). Made so, in small groups and one state a batch,
// on ticks whose window edges cut hours (asOf on and off the hour, reruns, new reports in asOf's
// hour), every summary, series, per-customer, platform and quality row equals a run's in one
// statement and one batch over copies of the same files (a warehouse of its own), and the
// independent SQL over the raw files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { publishedDir, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { summaryGroups } from '../../warehouse/publish/snapshot-summaries.ts';
import { edgeHourBatches } from '../../warehouse/states/window-pieces.ts';
import { keepEnv } from '../helpers/env.ts';

const BASE = new Date('2026-11-10T00:00:00Z');
const HOUR = 3_600_000;
const ENV = 'P2PTEL_TEST_SUMMARY_GROUP_ROWS';
const EDGE_ENV = 'P2PTEL_TEST_EDGE_LOAD_BYTES';
const restoreEnv = keepEnv(ENV, EDGE_ENV);

let grouped: TestWarehouse;
let whole: TestWarehouse;

/**
 * Reports of three customers of different sizes over `hours` from `start`, landed in both
 * warehouses (in `whole`, as copies of `grouped`'s new files: the files landed before stay as they
 * are, and the reference run rebuilds only the partitions that got one).
 */
async function land(start: Date, hours: number, seed: number, sessions: number[]): Promise<void> {
  for (const [i, customer] of ['acme', 'globex', 'initech'].entries()) {
    const { files } = await generateReports(grouped.db, grouped.layout, { customers: [customer], streams: 3, sessions: sessions[i]!, start, hours, seed: seed + i });
    for (const from of files) {
      const to = path.join(whole.layout.rawReports, path.relative(grouped.layout.rawReports, from));
      await fs.mkdir(path.dirname(to), { recursive: true });
      await fs.copyFile(from, to);
    }
  }
}

/** Every row of the per-customer rows and the quality file, in a fixed order. */
async function otherRows(wh: TestWarehouse, snapshot: string): Promise<Record<string, unknown>[][]> {
  const files = snapshotFiles(publishedDir(wh.layout, snapshot));
  return wh.db.withSession(async (s) => [
    await s.all<Record<string, unknown>>(`SELECT * FROM read_parquet(${quotedString(files.customers)}) ORDER BY ALL`),
    await s.all<Record<string, unknown>>(`SELECT * FROM read_parquet(${quotedString(files.streamQuality)}) ORDER BY ALL`),
  ]);
}

/** Each stream's session-class rows in a snapshot (as the summaries count them), by streamId. */
async function streamRows(wh: TestWarehouse, snapshot: string): Promise<{ customer: string; streamId: string; n: number }[]> {
  const dir = publishedDir(wh.layout, snapshot);
  const rows = await wh.db.withSession((s) =>
    s.all<{ customer: string; streamId: string; n: bigint }>(
      `SELECT customer, streamId, count(*) AS n FROM read_parquet(${quotedString(`${dir}/session_classes/*/*.parquet`)}, hive_partitioning = true) GROUP BY ALL ORDER BY streamId, customer`,
    ),
  );
  return rows.map((r) => ({ ...r, n: Number(r.n) }));
}

beforeAll(async () => {
  grouped = await openTestWarehouse();
  whole = await openTestWarehouse();
  // Nine days of history, then ticks into the tenth.
  await land(BASE, 9 * 24, 70, [4, 10, 16]);
}, 180_000);

afterAll(async () => {
  restoreEnv();
  await grouped?.close();
  await whole?.close();
});

describe('summaryGroups', () => {
  it('cuts the streams, in order, into runs up to the budget, a stream of more alone', () => {
    const r = (customer: string, stream: string, n: number) => ({ customer, streamId: `${customer}:${stream}`, n });
    const streams = [r('a', '1', 30), r('a', '2', 50), r('b', '1', 10), r('b', '2', 250), r('b', '3', 60), r('c', '1', 40)];
    expect(summaryGroups(streams, 100)).toEqual([
      { customers: ['a', 'b'], first: 'a:1', last: 'b:1' },
      { customers: ['b'], first: 'b:2', last: 'b:2' },
      { customers: ['b', 'c'], first: 'b:3', last: 'c:1' },
    ]);
    expect(summaryGroups(streams, 1_000)).toEqual([{ customers: ['a', 'b', 'c'], first: 'a:1', last: 'c:1' }]);
    expect(summaryGroups([], 100)).toEqual([]);
  });
  it('keeps the rows of one stream together, whatever customers they name', () => {
    const streams = [
      { customer: 'a', streamId: 'a:1', n: 60 },
      { customer: 'b', streamId: 'a:1', n: 60 },
      { customer: 'a', streamId: 'a:2', n: 10 },
    ];
    expect(summaryGroups(streams, 100)).toEqual([
      { customers: ['a', 'b'], first: 'a:1', last: 'a:1' },
      { customers: ['a'], first: 'a:2', last: 'a:2' },
    ]);
  });
});

describe('edgeHourBatches', () => {
  it('keeps a state whole, packs states in order up to the budget, one over it alone', () => {
    const m = (stateId: string, ...sizes: number[]) => ({ stateId, files: sizes.map((size) => ({ path: stateId, size, mtimeMs: 0 })) });
    const [a, b, c, d] = [m('a', 10, 20), m('b', 40), m('c', 200), m('d', 5)];
    const edges = [
      { m: a, h: 1 },
      { m: b, h: 1 },
      { m: a, h: 2 },
      { m: c, h: 1 },
      { m: d, h: 3 },
    ];
    expect(edgeHourBatches(edges, 100).map((batch) => batch.map((e) => `${e.m.stateId}${e.h}`))).toEqual([['a1', 'a2', 'b1'], ['c1'], ['d3']]);
    expect(edgeHourBatches(edges, 1).map((batch) => batch.length)).toEqual([2, 1, 1, 1]);
    expect(edgeHourBatches([], 100)).toEqual([]);
  });
});

describe('summaries in groups and edge hours a state at a time equal one statement, one batch, and the independent SQL', () => {
  // Budgets, from the snapshot's rows of each customer: every customer's streams in several runs
  // (`split`); the two smaller customers in one run, the largest in one of its own (`pack`). At
  // each tick, a run of each in `grouped` (the `pack` run a rerun of the same asOf, its edge hours
  // loaded again), both against the same reference run in `whole`, which is checked against the
  // independent SQL: the grouped runs' rows equal it.
  it('split and pack, over ticks whose edges cut hours', async () => {
    const budgets = {
      split: (rows: number[]) => Math.max(1, Math.floor(Math.min(...rows) / 2)),
      pack: (rows: number[]) => Math.max(rows[0]! + rows[1]!, rows[2]!),
    };
    const byCustomer = (streams: { customer: string; n: number }[]) =>
      ['acme', 'globex', 'initech'].map((c) => streams.filter((r) => r.customer === c).reduce((a, r) => a + r.n, 0));
    const day = BASE.getTime() + 9 * 24 * HOUR;
    const ticks: { asOf: number; land?: [number, number, number] }[] = [
      { asOf: day + 17 * 60_000 + 5_123, land: [day, 1, 200] },
      { asOf: day + 22 * 60_000 + 5_123 },
      { asOf: day + HOUR, land: [day + HOUR - 20 * 60_000, 0.3, 300] },
      { asOf: day + 2 * HOUR + 60_000, land: [day + HOUR, 1, 400] },
    ];
    const edgeReportsRead = { split: 0, pack: 0 };
    for (const [t, tick] of ticks.entries()) {
      if (tick.land) await land(new Date(tick.land[0]), tick.land[1], tick.land[2], [1, 2, 3]);
      const asOf = new Date(tick.asOf);
      const ref = await runPipeline(whole, { asOf, replaceCurrent: true });
      await expectSnapshotMatchesIndependent(whole.db, whole.layout, ref.manifest.snapshot, `reference, tick ${t} (asOf ${asOf.toISOString()})`);
      const refRows = await snapshotRows(whole.db, whole.layout, ref.manifest.snapshot);
      const refOther = await otherRows(whole, ref.manifest.snapshot);
      const streams = await streamRows(whole, ref.manifest.snapshot);
      for (const [name, budgetOf] of Object.entries(budgets)) {
        const budget = budgetOf(byCustomer(streams));
        const groups = summaryGroups(streams, budget);
        if (name === 'split') {
          expect(groups.every((g) => g.customers.length === 1)).toBe(true);
          for (const c of ['acme', 'globex', 'initech']) expect(groups.filter((g) => g.customers[0] === c).length).toBeGreaterThan(1);
        } else expect(groups.map((g) => g.customers)).toEqual([['acme', 'globex'], ['initech']]);
        process.env[ENV] = String(budget);
        process.env[EDGE_ENV] = '1';
        const run = await runPipeline(grouped, { asOf, replaceCurrent: true }).finally(() => {
          delete process.env[ENV];
          delete process.env[EDGE_ENV];
        });
        const what = `${name} (${budget} rows), tick ${t} (asOf ${asOf.toISOString()})`;
        expectSameSnapshotRows(await snapshotRows(grouped.db, grouped.layout, run.manifest.snapshot), refRows, what);
        expect(await otherRows(grouped, run.manifest.snapshot), what).toEqual(refOther);
        expect(run.manifest.rows, what).toEqual(ref.manifest.rows);
        edgeReportsRead[name as keyof typeof edgeReportsRead] += run.manifest.combine!.rawReportsRead;
      }
    }
    // Edge hours were loaded from raw files (a state a batch) on the way.
    expect(edgeReportsRead.split).toBeGreaterThan(0);
    expect(edgeReportsRead.pack).toBeGreaterThan(0);
  }, 300_000);
});
