// A compaction merge whose inputs may hold the same landed row (warehouse/compaction/merge.ts): a
// compacted file read with a file it covers writes that file's rows once; inputs that cannot share
// a row are merged by a sort only (no grouping of every row), and keep every row, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { compactPartition } from '../../warehouse/compaction/merge.ts';
import type { LandedFile } from '../../warehouse/landing/landed-files.ts';

const DATE = '2026-11-20';
let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
});

afterAll(async () => {
  await wh?.close();
});

const report = (i: number): HandReport => ({ reportId: `r${i}`, sessionId: `acme:s0-${i % 3}`, streamId: 'acme:s0', ts: `${DATE}T01:00:${String(i % 60).padStart(2, '0')}Z` });

async function landed(name: string, rows: HandReport[]): Promise<LandedFile> {
  const file = landingPath(wh.root, 'acme', DATE, name);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeReportsParquet(wh.db, file, rows);
  return asLanded(file);
}

async function asLanded(file: string): Promise<LandedFile> {
  const st = await fs.stat(file);
  return { path: file, relPath: path.relative(wh.layout.rawReports, file), customerId: 'acme', date: DATE, size: st.size, mtimeMs: st.mtimeMs };
}

const lock = { assertHeld: () => {} };
/** A compacted file's rows in file order: where each first landed, and its reportId. */
const rowsOf = async (file: string) =>
  wh.db.withSession((s) =>
    s.all<{ src: string; row: bigint; reportId: string }>(
      `SELECT _source_file AS src, _source_row AS row, reportId FROM read_parquet('${file}', file_row_number = true, hive_partitioning = false) ORDER BY file_row_number`,
    ),
  );

describe('compaction: inputs that share rows', () => {
  it('writes once a row that a compacted file and a file it covers both hold, and sorts the rows of inputs that share none', async () => {
    const a = await landed('a.parquet', [report(0), report(1), report(2)]);
    const b = await landed('b.parquet', [report(3), report(4)]);
    const first = await wh.db.withSession((s) => compactPartition({ s, layout: wh.layout, lock }, [b, a]));
    expect(first!.rows).toBe(5);
    const compacted = path.join(wh.layout.rawReports, first!.relPath);
    // In order of the file each row first landed in, then its row there.
    expect((await rowsOf(compacted)).map((r) => `${r.src}:${r.row}:${r.reportId}`)).toEqual(['a.parquet:0:r0', 'a.parquet:1:r1', 'a.parquet:2:r2', 'b.parquet:0:r3', 'b.parquet:1:r4']);
    // The compacted file read again with a file it covers (as after a crash between a merge and
    // the removal of what it covers): a's rows once, c's added.
    const c = await landed('c.parquet', [report(5)]);
    const inputs = [await asLanded(compacted), a, c];
    const second = await wh.db.withSession((s) => compactPartition({ s, layout: wh.layout, lock }, inputs));
    expect(second!.rows).toBe(6);
    const rows = await rowsOf(path.join(wh.layout.rawReports, second!.relPath));
    expect(rows.map((r) => `${r.src}:${r.row}`)).toEqual(['a.parquet:0', 'a.parquet:1', 'a.parquet:2', 'b.parquet:0', 'b.parquet:1', 'c.parquet:0']);
  });
});
