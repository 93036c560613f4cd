// The flusher (collector/flusher.ts) seals the open spool segment when the policy says, even while
// an earlier segment is still landing: a segment stays near the policy's size however far landing
// lags, and each lands as its own files. Landing is held back here by a statement that keeps the
// flusher's only DuckDB slot busy until the test aborts it.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { Spool } from '../../collector/spool.ts';
import { Flusher } from '../../collector/flusher.ts';
import { Db } from '../../warehouse/duckdb/db.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { loadConfig } from '../../lib/config.ts';
import { silentLogger } from '../../lib/log.ts';
import { listFiles } from '../../lib/fsx.ts';
import { sampleReport, spoolLines } from '../helpers/collector.ts';

const NOW = Date.now();

/** Spool lines of `n` valid reports, numbered from `from`. */
function lines(from: number, n: number): Buffer {
  return spoolLines(Array.from({ length: n }, (_, i) => sampleReport('acme:live-main', new Date(NOW - 60_000 + from + i), from + i)));
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

describe('the flusher', () => {
  it('seals a due segment while an earlier one is still landing, and lands each on its own', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'p2ptel-flusher-'));
    dirs.push(dir);
    const layout = warehouseLayout(path.join(dir, 'warehouse'));
    const spool = await Spool.open(path.join(dir, 'spool'), silentLogger);
    const config = loadConfig({ overrides: { WAREHOUSE_DIR: layout.root } });
    const db = await Db.open({ ...config.duckdb, threads: 1, maxConcurrent: 1 }, path.join(dir, 'spill'));
    // Sealed at 3 reports; checked every 50 ms (a quarter of the interval, at least 50 ms).
    const flusher = new Flusher(spool, db, layout, { intervalMs: 200, reports: 3 }, silentLogger);
    const hold = new AbortController();
    const blocker = db.withSession((s) => s.run('SELECT count(*) FROM range(1000000000000)'), { signal: hold.signal }).catch(() => 'stopped');
    try {
      flusher.start();
      await spool.append(lines(0, 3), 3);
      // Sealed and waiting to land behind the blocker.
      await expect.poll(() => spool.sealed().length, { timeout: 5_000 }).toBe(1);
      await spool.append(lines(3, 3), 3);
      await expect.poll(() => spool.sealed().length, { timeout: 5_000 }).toBe(2);
      await spool.append(lines(6, 2), 2);
      // Not due by size: sealed once its time (200 ms) has passed, landing or not.
      await expect.poll(() => spool.sealed().length, { timeout: 5_000 }).toBe(3);
      expect(spool.openSegment().reports).toBe(0);
      expect(await listFiles(layout.rawReports, '.parquet')).toEqual([]); // nothing landed yet

      hold.abort();
      expect(await blocker).toBe('stopped');
      await flusher.flushAll();
      expect(spool.sealed()).toEqual([]);
      // Three segments, each its own file (one partition each); every report once.
      const files = await listFiles(layout.rawReports, '.parquet');
      expect(new Set(files.map((f) => /ingest-[^-]+-[^-]+-(\d{12})-/.exec(path.basename(f))![1])).size).toBe(3);
      const duck = await (await DuckDBInstance.create(':memory:')).connect();
      const rows = await duck.runAndReadAll(`SELECT count(*)::INTEGER AS n, count(DISTINCT reportId)::INTEGER AS ids FROM read_parquet('${layout.rawReports}/**/*.parquet', hive_partitioning = false)`);
      expect(rows.getRowObjectsJson()).toEqual([{ n: 8, ids: 8 }]);
    } finally {
      hold.abort();
      flusher.stop();
      await spool.close();
      await db.close();
    }
  });
});
