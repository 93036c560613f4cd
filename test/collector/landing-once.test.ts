// Landed files are named once and for all, and landing never replaces a file: a collector restarted
// cleanly on its spool lands under new names (before spool generations, a restart named its first
// segment as the earlier run's first, and the rename replaced that file: data loss); a segment that
// a crash left in the spool after some or all of its files were placed lands each report once.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Spool, type Segment } from '../../collector/spool.ts';
import { Flusher } from '../../collector/flusher.ts';
import { startCollector } from '../../collector/server.ts';
import { Db } from '../../warehouse/duckdb/db.ts';
import { fileList, quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { warehouseLayout, type WarehouseLayout } from '../../warehouse/layout.ts';
import { loadConfig } from '../../lib/config.ts';
import { silentLogger } from '../../lib/log.ts';
import { linkNoReplace, listFiles } from '../../lib/fsx.ts';
import { sampleReport, spoolLines, startTestCollector, collectorConfig } from '../helpers/collector.ts';

const NOW = Date.now();
const DAY = 86_400_000;

/** Spool lines of reports `ids`, at `ts`. */
function lines(ids: readonly string[], ts: (i: number) => Date): Buffer {
  return spoolLines(ids.map((id, i) => sampleReport('acme:live-main', ts(i), i, { reportId: id })));
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

interface Bench {
  layout: WarehouseLayout;
  spoolDir: string;
  db: Db;
  /** reportId → copies, over every landed file. */
  copies(): Promise<Map<string, number>>;
}

async function bench(): Promise<Bench> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'p2ptel-landing-'));
  dirs.push(dir);
  const layout = warehouseLayout(path.join(dir, 'warehouse'));
  const config = loadConfig({ overrides: { WAREHOUSE_DIR: layout.root } });
  const db = await Db.open({ ...config.duckdb, threads: 1, maxConcurrent: 1 }, path.join(dir, 'spill'));
  return {
    layout,
    spoolDir: path.join(dir, 'spool'),
    db,
    async copies() {
      const files = await listFiles(layout.rawReports, '.parquet');
      const rows = files.length === 0 ? [] : await db.withSession((s) => s.all<{ reportId: string; n: number }>(`SELECT reportId, count(*)::INTEGER AS n FROM read_parquet(${fileList(files)}, hive_partitioning = false) GROUP BY reportId`));
      return new Map(rows.map((r) => [r.reportId, r.n]));
    },
  };
}

/** Open the spool, append `data`, land it all, close. */
async function landOnce(b: Bench, data: Buffer, reports: number): Promise<void> {
  const spool = await Spool.open(b.spoolDir, silentLogger);
  const flusher = new Flusher(spool, b.db, b.layout, { intervalMs: 3_600_000, reports: 1_000_000 }, silentLogger);
  try {
    await spool.append(data, reports);
    await flusher.flushAll();
  } finally {
    await spool.close();
  }
}

/** Land the spool's segments as a start after a crash does (replay), then close. */
async function replay(b: Bench): Promise<void> {
  const spool = await Spool.open(b.spoolDir, silentLogger);
  const flusher = new Flusher(spool, b.db, b.layout, { intervalMs: 3_600_000, reports: 1_000_000 }, silentLogger);
  try {
    await flusher.flushAll();
    expect(spool.sealed()).toEqual([]);
  } finally {
    await spool.close();
  }
}

/**
 * Append `data` to a fresh segment, seal it, keep a copy of its file aside and land it all: putting
 * the copy back replays what a crash between placing its files and removing it leaves.
 */
async function landKeepingSegment(b: Bench, data: Buffer, reports: number): Promise<{ sealed: Segment; keep: string }> {
  const keep = path.join(path.dirname(b.spoolDir), 'kept-segment');
  const spool = await Spool.open(b.spoolDir, silentLogger);
  await spool.append(data, reports);
  const sealed = (await spool.seal())!;
  await fs.copyFile(sealed.file, keep);
  await new Flusher(spool, b.db, b.layout, { intervalMs: 3_600_000, reports: 1_000_000 }, silentLogger).flushAll();
  await spool.close();
  return { sealed, keep };
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('landing under names unique forever', () => {
  it('a clean restart lands its first segment beside the earlier run’s, not over it', async () => {
    const b = await bench();
    try {
      await landOnce(b, lines(['R1'], () => new Date(NOW - 60_000)), 1);
      await landOnce(b, lines(['R2'], () => new Date(NOW - 60_000)), 1);
      await landOnce(b, lines(['R3'], () => new Date(NOW - 60_000)), 1);
      const files = await listFiles(b.layout.rawReports, '.parquet');
      expect(files).toHaveLength(3);
      expect(new Set(files.map((f) => path.basename(f))).size).toBe(3);
      expect(Object.fromEntries(await b.copies())).toEqual({ R1: 1, R2: 1, R3: 1 });
    } finally {
      b.db.close();
    }
  });

  it('a segment left in the spool after all its files were placed lands nothing again', async () => {
    const b = await bench();
    try {
      // Two partitions (two UTC dates), landed; then the segment file is put back as a crash
      // between the last placement and the segment's removal leaves it.
      const { sealed, keep } = await landKeepingSegment(b, lines(ids('a', 50), (i) => new Date(NOW - (i % 2) * DAY - 60_000)), 50);
      const landed = await listFiles(b.layout.rawReports, '.parquet');
      expect(landed).toHaveLength(2);
      await fs.copyFile(keep, sealed.file);

      await replay(b);
      expect(await listFiles(b.layout.rawReports, '.parquet')).toEqual(landed);
      const copies = await b.copies();
      expect(copies.size).toBe(50);
      expect([...copies.values()].every((n) => n === 1)).toBe(true);

      // One of the two partitions placed, the other not: the replay places only the missing one,
      // under the name it would have had.
      await fs.copyFile(keep, sealed.file);
      await fs.rm(landed[1]!);
      await replay(b);
      expect(await listFiles(b.layout.rawReports, '.parquet')).toEqual(landed);
      expect([...(await b.copies()).values()].every((n) => n === 1)).toBe(true);
      expect((await b.copies()).size).toBe(50);
    } finally {
      b.db.close();
    }
  });

  it('a partition placed in part (one of its files) gets only its missing rows', async () => {
    const b = await bench();
    try {
      const { sealed, keep } = await landKeepingSegment(b, lines(ids('p', 40), () => new Date(NOW - 60_000)), 40);
      const [only] = await listFiles(b.layout.rawReports, '.parquet');
      // As if the partition had been written as two files and the crash came between them: the
      // placed file holds the first 15 reports only.
      const part = `${only!}.part`;
      await b.db.withSession((s) => s.run(`COPY (SELECT * FROM read_parquet(${quotedString(only!)}) WHERE reportId IN (${ids('p', 15).map(quotedString).join(', ')})) TO ${quotedString(part)} (FORMAT parquet)`));
      await fs.rename(part, only!);
      expect((await b.copies()).size).toBe(15);
      await fs.copyFile(keep, sealed.file);

      await replay(b);
      const files = await listFiles(b.layout.rawReports, '.parquet');
      expect(files).toHaveLength(2);
      expect(files).toContain(only);
      const copies = await b.copies();
      expect([...copies.keys()].sort()).toEqual(ids('p', 40).sort());
      expect([...copies.values()].every((n) => n === 1)).toBe(true);
    } finally {
      b.db.close();
    }
  });

  it('linkNoReplace never replaces a file', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'p2ptel-link-'));
    dirs.push(dir);
    await fs.writeFile(path.join(dir, 'a'), 'first');
    await fs.writeFile(path.join(dir, 'b'), 'second');
    expect(await linkNoReplace(path.join(dir, 'b'), path.join(dir, 'a'))).toBe(false);
    expect(await fs.readFile(path.join(dir, 'a'), 'utf8')).toBe('first');
    expect(await linkNoReplace(path.join(dir, 'b'), path.join(dir, 'c'))).toBe(true);
    expect(await fs.readFile(path.join(dir, 'c'), 'utf8')).toBe('second');
  });
});

describe('a collector restarted on its spool', () => {
  it('keeps every report of every run (post, stop, start, post, stop)', async () => {
    const c = await startTestCollector();
    try {
      const ts = new Date(NOW - 60_000);
      expect((await c.post(JSON.stringify([sampleReport('acme:live-main', ts, 0, { reportId: 'run-1' })]))).status).toBe(202);
      await c.collector.close();
      for (const run of [2, 3]) {
        const again = await startCollector(collectorConfig(c.wh.root, c.spoolDir), silentLogger);
        const res = await fetch(`${again.url}/v1/session-reports`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Ingest-Key': c.keys['acme']! },
          body: JSON.stringify([sampleReport('acme:live-main', ts, run, { reportId: `run-${run}` })]),
        });
        expect(res.status).toBe(202);
        await again.close();
      }
      expect((await c.landed()).map((r) => r.reportId)).toEqual(['run-1', 'run-2', 'run-3']);
    } finally {
      await c.wh.close();
    }
  });
});
