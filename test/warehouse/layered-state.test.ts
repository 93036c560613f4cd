// Layered states of recent days (warehouse/states/layered-state.ts): a file landing into today's
// partition adds a layer instead of a rebuild from every file. Each step's snapshot equals a
// from-scratch run over the same files and the independent SQL over the raw files, and the states
// say how they were made: built whole (not layered) when the day had no state, as in a full run;
// layered from the next run on, appended when they could be, built whole when a new copy of a
// report outranks an earlier layer's, never rebuilt because compaction merged files they had read.
// The minutes a new layer touches are remade in runs of at most 4 minute pieces each
// (P2PTEL_TEST_TOUCHED_MINUTES_MAX_ROWS; a busy day's runs hold 400,000), so that every layered
// build here regroups them in many statements, and its figures are checked all the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { runCompaction } from '../../jobs/compaction/compact.ts';
import { listFiles } from '../../lib/fsx.ts';
import { readStates, type StateMeta } from '../../warehouse/states/state-store.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { discoverLanding } from '../../warehouse/landing/landed-files.ts';
import { schemaColumns } from '../../warehouse/landing/partition-load.ts';
import { keepEnv } from '../helpers/env.ts';

const BASE = new Date('2026-11-24T00:00:00Z');
const HOUR = 3_600_000;
const at = (hours: number) => new Date(BASE.getTime() + hours * HOUR);

let pool: TestWarehouse;
let inc: TestWarehouse;
let scratch: TestWarehouse;
/** The pool's files of hour g (one per customer), by g. */
const hourFiles = new Map<number, string[]>();

const TOUCHED_ENV = 'P2PTEL_TEST_TOUCHED_MINUTES_MAX_ROWS';
const restoreEnv = keepEnv(TOUCHED_ENV);

beforeAll(async () => {
  process.env[TOUCHED_ENV] = '4';
  pool = await openTestWarehouse();
  inc = await openTestWarehouse({ COMPACTION_MIN_FILES: '1000' });
  scratch = await openTestWarehouse();
  for (let g = 0; g < 15; g++) {
    const before = new Set(await listFiles(pool.layout.rawReports, '.parquet'));
    await generateReports(pool.db, pool.layout, { customers: ['ac', 'acme'], streams: 2, sessions: 5, start: at(g), hours: 1, seed: 700 + g });
    hourFiles.set(g, (await listFiles(pool.layout.rawReports, '.parquet')).filter((f) => !before.has(f) && f.includes('date=2026-11-24')));
  }
}, 120_000);

afterAll(async () => {
  restoreEnv();
  await pool?.close();
  await inc?.close();
  await scratch?.close();
});

async function land(g: number): Promise<void> {
  for (const from of hourFiles.get(g)!) {
    const to = path.join(inc.layout.rawReports, path.relative(pool.layout.rawReports, from));
    await fs.mkdir(path.dirname(to), { recursive: true });
    await fs.copyFile(from, to);
  }
}

/** The rows of hour g's files (every customer's) with ts before (`part` 0) or from (1) `split`, landed under `name`. */
async function landPart(g: number, split: Date, part: 0 | 1, name: string): Promise<void> {
  for (const from of hourFiles.get(g)!) {
    const to = path.join(inc.layout.rawReports, path.dirname(path.relative(pool.layout.rawReports, from)), name);
    await fs.mkdir(path.dirname(to), { recursive: true });
    const cut = `TIMESTAMP '${split.toISOString().replace('T', ' ').replace('Z', '')}'`;
    await inc.db.withSession((s) => s.run(`COPY (SELECT * FROM read_parquet(${quotedString(from)}) WHERE ts ${part === 0 ? '<' : '>='} ${cut}) TO ${quotedString(to)} (FORMAT parquet)`));
  }
}

/** Every row of hour g's file of `customer` again, under `name` in the same partition: copies of each report. */
async function landCopies(g: number, customer: string, name: string): Promise<number> {
  const from = hourFiles.get(g)!.find((f) => f.includes(`customer=${customer}/`))!;
  const to = path.join(inc.layout.rawReports, `customer=${customer}`, 'date=2026-11-24', name);
  return inc.db.withSession(async (s) => {
    await s.run(`COPY (SELECT * FROM read_parquet(${quotedString(from)})) TO ${quotedString(to)} (FORMAT parquet)`);
    return (await s.one<{ n: number }>(`SELECT count(*) AS n FROM read_parquet(${quotedString(from)})`)).n;
  });
}

/** The session class files of a customer's class units in the state area (class-units.ts). */
async function classFiles(customer: string): Promise<string[]> {
  return (await fs.readdir(path.join(inc.layout.state, `customer=${customer}`))).filter((n) => n.startsWith('classes-'));
}

async function acmeState(): Promise<StateMeta> {
  return (await readStates(inc.layout)).get('acme/2026-11-24')![0]!;
}

/** A run at asOf, checked against a from-scratch run over the same files and the independent SQL. */
async function runAndCheck(asOf: Date, what: string, replaceCurrent = false) {
  const run = await runPipeline(inc, { asOf, compact: false, replaceCurrent });
  await fs.rm(scratch.layout.rawReports, { recursive: true, force: true });
  // The files readers see: a file that a compacted file covers stays until retention removes it.
  for (const f of (await discoverLanding(inc.layout)).files) {
    const to = path.join(scratch.layout.rawReports, f.relPath);
    await fs.mkdir(path.dirname(to), { recursive: true });
    await fs.copyFile(f.path, to);
  }
  const base = await runPipeline(scratch, { asOf, rebuild: true, compact: false, replaceCurrent: true });
  // The from-scratch run builds the day whole (no layers): the check is of layered states against whole ones.
  expect((await readStates(scratch.layout)).get('acme/2026-11-24')![0]!.layers, what).toBeUndefined();
  expectSameSnapshotRows(await snapshotRows(inc.db, inc.layout, run.manifest.snapshot), await snapshotRows(scratch.db, scratch.layout, base.manifest.snapshot), what);
  expect(run.manifest.rows, what).toEqual(base.manifest.rows);
  await expectSnapshotMatchesIndependent(inc.db, inc.layout, run.manifest.snapshot, what);
  return run;
}

describe('layered states of recent days', () => {
  it('append, drop later copies, rebuild on an outranking copy, survive compaction, cut at asOf', async () => {
    // A day with no state yet is built whole (as a full run builds it), not as a layer; the next
    // run that adds to it makes its layered state, of one layer (every file read).
    await land(0);
    const wholeRun = await runAndCheck(at(2), 'first build, whole');
    expect(wholeRun.manifest.partitionStates!.reasons).toEqual({ 'no state yet': 2 });
    const whole = await acmeState();
    expect(whole.made).toBeUndefined();
    expect(whole.layers).toBeUndefined();
    await land(1);
    await runAndCheck(at(2), 'first layered build');
    const first = await acmeState();
    expect(first.made).toBe('built');
    expect(first.layers).toHaveLength(1);
    expect(first.rowsRead).toBeGreaterThan(whole.rowsRead);

    // A new file: one layer more (or merged into one), and only the new file was read.
    await land(2);
    await runAndCheck(at(3), 'append');
    const second = await acmeState();
    expect(second.made).toBe('appended');
    const acmeFiles = hourFiles.get(2)!.filter((f) => f.includes('customer=acme/'));
    const newRows = await inc.db.withSession(async (s) =>
      (await s.one<{ n: number }>(`SELECT count(*) AS n FROM read_parquet([${acmeFiles.map(quotedString).join(', ')}])`)).n,
    );
    expect(second.rowsRead - first.rowsRead).toBe(newRows);

    // Copies of every report of hour 0 in a file whose name sorts after theirs: dropped, appended.
    // The new state links the layers it keeps, and their session classes (class-units.ts) are
    // reused at the same hour of asOf: at most the new layer's are computed.
    const classesBefore = await classFiles('acme');
    const copies = await landCopies(0, 'acme', 'zz-copies.parquet');
    await runAndCheck(at(3), 'later copies');
    const third = await acmeState();
    expect(third.made).toBe('appended');
    expect(third.duplicatesDropped - second.duplicatesDropped).toBe(copies);
    expect(third.reports).toBe(second.reports);
    const computed = (await classFiles('acme')).filter((f) => !classesBefore.includes(f));
    expect(computed.length).toBeLessThanOrEqual(third.layers!.length - second.layers!.length);
    expect(second.layers!.length).toBeGreaterThan(0);

    // Copies in a file whose name sorts before theirs: the rule keeps the new copies, so the
    // state is built whole.
    await landCopies(1, 'acme', 'a-copies.parquet');
    await runAndCheck(at(3), 'earlier copies');
    expect((await acmeState()).made).toBe('built');

    // Reports after asOf (hours 3.5 to 5) are held back from the layers: the snapshot uses the
    // state whole (its series file, its hour pieces), and the hour the 1h edge cuts comes from the
    // layers' report files, never from raw files.
    await land(3);
    await land(4);
    const asOf = new Date(at(3.5).getTime() + 12_345);
    const cut = await runAndCheck(asOf, 'reports after asOf held back');
    const holding = await acmeState();
    expect(holding.pending?.reports).toBeGreaterThan(0);
    expect(Date.parse(holding.maxTs!)).toBeLessThanOrEqual(asOf.getTime());
    expect(cut.manifest.combine!.layeredStatesCut).toBeGreaterThan(0);
    expect(cut.manifest.combine!.rawReportsRead).toBe(0);
    expect(cut.manifest.combine!.seriesDaysComputed).toBe(0);

    // A run at an earlier asOf reuses that state, whose layers hold reports after it: asOf's hour
    // and its day's series come from the layers' minute and report pieces, never raw files.
    const earlier = await runAndCheck(at(3.25), 'layers after asOf', true);
    expect(earlier.manifest.partitionStates!.rebuilt).toBe(0);
    expect(earlier.manifest.combine!.rawReportsRead).toBe(0);
    expect(earlier.manifest.combine!.seriesDaysComputed).toBeGreaterThan(0);

    // Compaction of files the state has read leaves the state's layers as they are.
    const layersBefore = (await acmeState()).layers!.map((l) => l.layerId);
    const compacted = await runCompaction(inc, { force: true });
    expect(compacted.compacted.length).toBeGreaterThan(0);
    await runAndCheck(asOf, 'after compaction');
    const afterCompaction = await acmeState();
    expect(afterCompaction.made).toBe('appended');
    expect(afterCompaction.layers!.map((l) => l.layerId)).toEqual(layersBefore);
    expect(afterCompaction.pending).toEqual(holding.pending);
    expect(afterCompaction.files.some((f) => path.basename(f.path).startsWith('compacted-'))).toBe(true);
    // Every input keeps its schema, the absorbed compacted file's read from its footer (with the
    // provenance columns), so the catalog reads it with its schema's files, not all by name.
    for (const f of afterCompaction.files) {
      const columns = await inc.db.withSession((s) => s.all<{ column_name: string }>(`DESCRIBE SELECT * FROM read_parquet(${quotedString(path.join(inc.layout.rawReports, f.path))})`));
      // (a compacted file also keeps the partition's customer and date, which no schema lists)
      expect(f.schema && schemaColumns(f.schema), f.path).toEqual(columns.map((c) => c.column_name).filter((c) => c !== 'customer' && c !== 'date'));
    }

    // Once asOf reaches the held reports, they join a layer, with no new file.
    const due = await runAndCheck(at(5), 'held reports came due');
    expect(due.manifest.partitionStates!.reasons).toHaveProperty(['held reports came due']);
    const joined = await acmeState();
    expect(joined.pending).toBeUndefined();
    expect(joined.reports).toBe(afterCompaction.reports);

    // Many appends keep a few layers: trailing layers merge while sizes are alike. Two hours a
    // run: five appends of layers alike in size (a run an hour took nine runs for the same rule).
    for (let g = 5; g < 14; g += 2) {
      await land(g);
      if (g + 1 < 14) await land(g + 1);
      await runPipeline(inc, { asOf: at(Math.min(g + 2, 14)), compact: false });
      expect((await acmeState()).made).toBe('appended');
    }
    expect((await acmeState()).layers!.length).toBeLessThanOrEqual(4);
    await runAndCheck(at(14), 'after many appends');

    // A layer inside an hour that an earlier layer holds part of: the 10-minute blocks its reports
    // touch are remade from every layer's minute pieces, the hour, 6-hour and day buckets from
    // every layer's per-session buckets, the other buckets kept.
    const split = new Date(at(14).getTime() + 25 * 60_000);
    await landPart(14, split, 0, 'hour-14-first.parquet');
    await runAndCheck(at(14.45), 'the first part of an hour');
    await landPart(14, split, 1, 'hour-14-rest.parquet');
    await runAndCheck(at(16), 'the rest of that hour');
    expect((await acmeState()).made).toBe('appended');
  }, 300_000);
});
