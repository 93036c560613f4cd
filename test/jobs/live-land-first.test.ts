// `start`'s runs land what the collector has acknowledged before they take their asOf
// (jobs/live-rollups.ts `landFirst`, collector/flusher.ts `landNow`): a report waits for the run
// in flight and its own, not for the flush timer too. Here the flush timer never fires (an hour),
// so only the runs land: each run counts the reports acknowledged before it, a segment open for
// less than the minimum age stays in the spool, and a landing made by a run asks for no run after
// it. Real spool, DuckDB, Parquet; figures checked against the independent SQL.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Spool } from '../../collector/spool.ts';
import { Flusher } from '../../collector/flusher.ts';
import { Db } from '../../warehouse/duckdb/db.ts';
import { silentLogger } from '../../lib/log.ts';
import { LiveRollups, type LiveRun } from '../../jobs/live-rollups.ts';
import { openTestWarehouse, tempDir, type TestWarehouse } from '../helpers/warehouse.ts';
import { sampleReport, spoolLines } from '../helpers/collector.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';

const HOUR = 3_600_000;
const NOW = Date.now();

let wh: TestWarehouse;
let spoolDir: string;
let spool: Spool;
let landingDb: Db;

/** Spool lines of `n` valid reports of acme:live-main, numbered from `from`, a minute old. */
function lines(from: number, n: number): Buffer {
  return spoolLines(Array.from({ length: n }, (_, i) => sampleReport('acme:live-main', new Date(NOW - 60_000 + from + i), from + i)));
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  spoolDir = await tempDir('p2ptel-land-first-');
  spool = await Spool.open(path.join(spoolDir, 'spool'), silentLogger);
  // The collector's own DuckDB, as in `start`.
  landingDb = await Db.open({ ...wh.config.duckdb, threads: 1, maxConcurrent: 1 }, path.join(spoolDir, 'spill'));
}, 60_000);

afterAll(async () => {
  await spool?.close();
  await landingDb?.close();
  await wh?.close();
  await fs.rm(spoolDir, { recursive: true, force: true });
});

describe('a live run lands the collector first', () => {
  it('counts every report acknowledged before it, leaves a young segment, and asks for no run after its own landing', async () => {
    const flusher = new Flusher(spool, landingDb, wh.layout, { intervalMs: HOUR, reports: 1_000_000 }, silentLogger);
    let minAgeMs = 0;
    const runs: LiveRun[] = [];
    let ended: (() => void) | null = null;
    const live = new LiveRollups(wh, { minGapMs: 0, idleMs: HOUR, landFirst: () => flusher.landNow(minAgeMs) }, (run) => {
      runs.push(run);
      ended?.();
    });
    flusher.onLanded(() => live.landed());
    /** One run asked for as a landing would, and its end. */
    const oneRun = async (): Promise<LiveRun> => {
      const before = runs.length;
      const done = new Promise<void>((r) => (ended = r));
      live.landed();
      await done;
      expect(runs.length).toBe(before + 1);
      return runs.at(-1)!;
    };
    flusher.start();
    live.start();
    try {
      await spool.append(lines(0, 5), 5);
      const first = await oneRun();
      expect(first.error).toBeNull();
      // The timer would have kept them for an hour: the run landed them, and counts them.
      expect(spool.openSegment().reports).toBe(0);
      expect(spool.sealed()).toEqual([]);
      expect(first.result!.manifest.rows.reports).toBe(5);
      await expectSnapshotMatchesIndependent(wh.db, wh.layout, first.result!.manifest.snapshot, 'the first run');
      // Its own landing asked for no second run.
      await new Promise((r) => setTimeout(r, 500));
      expect(runs.length).toBe(1);

      // A segment open for less than the minimum age stays in the spool: the run counts what had landed.
      minAgeMs = HOUR;
      await spool.append(lines(5, 3), 3);
      const second = await oneRun();
      expect(second.error).toBeNull();
      expect(spool.openSegment().reports).toBe(3);
      const secondCount = second.result!.published ? second.result!.manifest.rows.reports : first.result!.manifest.rows.reports;
      expect(secondCount).toBe(5);

      // Old enough: landed by the next run, and counted.
      minAgeMs = 0;
      const third = await oneRun();
      expect(third.error).toBeNull();
      expect(spool.openSegment().reports).toBe(0);
      expect(third.result!.manifest.rows.reports).toBe(8);
      await expectSnapshotMatchesIndependent(wh.db, wh.layout, third.result!.manifest.snapshot, 'the third run');
      await new Promise((r) => setTimeout(r, 500));
      expect(runs.length).toBe(3);
    } finally {
      await live.stop();
      flusher.stop();
    }
  }, 120_000);
});
