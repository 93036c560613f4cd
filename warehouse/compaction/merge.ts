// Compaction of one partition (docs/warehouse-state.md, "Compaction of small landed files"): some
// of its files merged into one, each row with where it first landed, so that the deduplication
// rule keeps the same copies (dedup_reports.sql). Crash-safe: the merged file is written in this
// host's scratch folder and fsynced, its record written durably (compaction-records.ts), then it
// is linked into the partition folder (never replacing a file) and the folder fsynced. The link is
// the one step that changes what readers see: before it they read the small files, after it the
// compacted one; a process killed at any step loses and doubles nothing.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { DbSession } from '../duckdb/index.ts';
import { checkSchemas, type LandedFile } from '../landing/index.ts';
import { validateRows } from '../landing/index.ts';
import { hostScratchDir, type WarehouseLayout } from '../layout.ts';
import { REPORT_COLUMNS } from '../session-reports/index.ts';
import { projectionSql, provenanceSql } from '../session-reports/index.ts';
import { fileList, fillSql, quotedString, sqlFile } from '../duckdb/index.ts';
import { partitionFolder, recordFile, writeRecord } from '../landing/index.ts';
import { fsyncDir, fsyncFile, linkNoReplace } from '../../lib/fsx.ts';
import { compactIso } from '../../lib/time.ts';
import type { HeldLock } from '../../lib/file-lock.ts';

/** The steps of a compaction, each reported once done (progress, and the crash tests' kill points). */
export type CompactionStep = 'merged' | 'recorded' | 'placed' | 'layers merged' | 'retired';
export type OnCompactionStep = (step: CompactionStep) => void | Promise<void>;

export interface CompactContext {
  s: DbSession;
  layout: WarehouseLayout;
  /** The compaction lock: checked still ours before each write that others would see. */
  lock: Pick<HeldLock, 'assertHeld'>;
  onStep?: OnCompactionStep | undefined;
}

export interface CompactedPartition {
  customerId: string;
  date: string;
  /** The compacted file, relative to the landing root. */
  relPath: string;
  /** Files merged, and their bytes. */
  files: number;
  bytesIn: number;
  bytesOut: number;
  rows: number;
}

/**
 * Merge `files` (of one partition) into one compacted file, and place it. Files that the rollup
 * would quarantine (a bad schema or row) are left as they are, for it to. Null when fewer than two
 * files can be merged.
 */
export async function compactPartition(ctx: CompactContext, files: readonly LandedFile[]): Promise<CompactedPartition | null> {
  const merge = await mergeable(ctx.s, files);
  if (merge.files.length < 2) return null;
  const { customerId, date } = merge.files[0]!;
  const folder = partitionFolder(customerId, date);
  const name = `compacted-${compactIso(new Date())}-${randomBytes(6).toString('hex')}.parquet`;
  const scratch = path.join(hostScratchDir(ctx.layout), `compact-${process.pid}-${randomBytes(4).toString('hex')}`);
  await fs.mkdir(scratch, { recursive: true });
  try {
    const merged = path.join(scratch, name);
    const overlap = merge.present.has('_source_file') && (await inputsOverlap(ctx.s, merge.files));
    const rows = await ctx.s.run(mergeSql(merge.files, merge.present, merged, overlap));
    await fsyncFile(merged);
    await ctx.onStep?.('merged');
    const covers = merge.files.map((f) => ({ name: path.basename(f.path), size: f.size, mtimeMs: f.mtimeMs }));
    ctx.lock.assertHeld();
    await writeRecord(ctx.layout, folder, { compacted: name, createdAt: new Date().toISOString(), covers });
    await ctx.onStep?.('recorded');
    ctx.lock.assertHeld();
    await place(ctx.layout, merged, path.join(path.dirname(merge.files[0]!.path), name), folder);
    await ctx.onStep?.('placed');
    const bytesIn = merge.files.reduce((a, f) => a + f.size, 0);
    return { customerId, date, relPath: `${folder}/${name}`, files: merge.files.length, bytesIn, bytesOut: (await fs.stat(merged)).size, rows };
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/** The files whose schema and rows pass the rollup's checks (landing.ts, validate-rows.ts), and the columns they have. */
async function mergeable(s: DbSession, files: readonly LandedFile[]): Promise<{ files: LandedFile[]; present: Set<string> }> {
  const verdicts = await checkSchemas(s, files.map((f) => f.path));
  const columns = new Map<string, ReadonlyMap<string, string>>();
  for (const [file, v] of verdicts) if (v.ok) columns.set(file, v.schema.columns);
  const bad = await validateRows(s, [...columns].map(([file, cols]) => ({ path: file, columns: cols })));
  const good = files.filter((f) => columns.has(f.path) && !bad.has(f.path));
  return { files: good, present: new Set(good.flatMap((f) => [...columns.get(f.path)!.keys()])) };
}

/**
 * Whether two of `files` may hold the same landed row: a compacted file and a file it covers, or
 * two compacted files covering one file (a row is known by the file it first landed in and its
 * row there). Only a compacted input can, so this is asked only when one is: one column read, a
 * group per source file.
 */
async function inputsOverlap(s: DbSession, files: readonly LandedFile[]): Promise<boolean> {
  const r = await s.one<{ n: number | bigint }>(fillSql(sqlFile('compact_overlap'), { files: fileList(files.map((f) => f.path)) }));
  return Number(r.n) > 0;
}

/**
 * The merge's statement (compact_files.sql). `overlap` (inputsOverlap): rows that two inputs hold
 * are written once, which holds every row in a grouping; without it, the rows are only sorted (a
 * sort DuckDB spills past its memory limit), so that a merge of many rows fits in `start`'s
 * 256MB (a merge of 16 compacted files of ~2.5 MB ran out of memory there at 5,000 reports/s).
 */
function mergeSql(files: readonly LandedFile[], present: ReadonlySet<string>, target: string, overlap: boolean): string {
  return fillSql(sqlFile('compact_files'), {
    distinct: overlap ? 'DISTINCT ON (_source_file, _source_row)' : '',
    files: fileList(files.map((f) => f.path)),
    provenance: provenanceSql(present),
    projection: projectionSql(REPORT_COLUMNS.map((c) => c.name).filter((n) => present.has(n)), present),
    target: quotedString(target),
  });
}

/**
 * Link the merged file in as `target` and fsync the folder. A name already taken (the names are
 * random and no other writer makes them) would make the record cover files that the file there
 * does not hold: the record is removed at once.
 */
async function place(layout: WarehouseLayout, merged: string, target: string, folder: string): Promise<void> {
  if (!(await linkNoReplace(merged, target))) {
    await fs.rm(recordFile(layout, folder, path.basename(target)));
    throw new Error(`a landed file already has the name ${path.basename(target)}`);
  }
  await fsyncDir(path.dirname(target));
}
