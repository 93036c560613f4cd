// The landing area of session reports: which files belong to which partition, whose schema is
// usable, and moving the bad ones to quarantine with a reason (docs/sdk-ingest.md, "Where the files land").
import fs from 'node:fs/promises';
import path from 'node:path';
import { statSync, type Dirent } from 'node:fs';
import type { DbSession } from '../duckdb/index.ts';
import { fileList, quotedString } from '../duckdb/index.ts';
import { KNOWN_COLUMNS, typeAccepts } from '../session-reports/index.ts';
import { CUSTOMER_ID_PATTERN } from '../ids.ts';
import { freePath, moveFile, readdirEntriesSyncOrEmpty, writeJsonDurable } from '../../lib/fsx.ts';
import type { WarehouseLayout } from '../layout.ts';
import { coveredNamesOf, partitionFolder, readRecordsSync, type CompactionRecord, type RecordsByPartition } from './compaction-records.ts';

export interface LandedFile {
  /** Absolute path. */
  path: string;
  /** Path relative to the landing root, e.g. customer=acme/date=2026-11-20/x.parquet */
  relPath: string;
  customerId: string;
  /** UTC date of the partition, YYYY-MM-DD. */
  date: string;
  size: number;
  /** Modification time (ms): with the size, what tells a state that a file changed. */
  mtimeMs: number;
}

export interface Misplaced {
  path: string;
  relPath: string;
  reason: string;
}

export interface QuarantinedFile {
  relPath: string;
  reason: string;
  detail: string;
}

const PARTITION_RE = /^customer=([^/]+)\/date=(\d{4}-\d{2}-\d{2})\/[^/]+\.parquet$/;

/** Whether `d` (YYYY-MM-DD) is a real date; memoised, as thousands of files share a few dates. */
const validDates = new Map<string, boolean>();
function validDate(d: string): boolean {
  let ok = validDates.get(d);
  if (ok === undefined) {
    const t = Date.parse(`${d}T00:00:00Z`);
    ok = Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === d;
    if (validDates.size < 100_000) validDates.set(d, ok);
  }
  return ok;
}

/**
 * Every `.parquet` file of the landing area, split into partition files and misplaced ones. Files
 * that a placed compacted file holds (compaction-records.ts) are not partition files any more.
 * `partitions`: list only these partitions' folders (their files; nothing is misplaced there).
 */
export async function discoverLanding(
  layout: WarehouseLayout,
  partitions?: readonly { customerId: string; date: string }[],
): Promise<{ files: LandedFile[]; misplaced: Misplaced[] }> {
  const folders = partitions?.map((p) => partitionFolder(p.customerId, p.date));
  // The compaction records before the files: a record removed meanwhile went after the files it
  // covered (compaction/retire.ts), so a covered file is never listed without its record.
  const records = readRecordsSync(layout, folders);
  // Every landed file is listed and stat'ed at each run's plan (thousands a day, tens of thousands
  // where a collector lands every few seconds and compaction's covered files wait out their grace
  // time): synchronously, a few µs each, rather than as many round trips through libuv's pool,
  // which DuckDB's calls share (state-store.ts readStates says why a job process can).
  const all = folders
    ? folders.flatMap((folder) => listLandingFolder(layout, folder, records.get(folder)))
    : listLanding(layout, records);
  const files: LandedFile[] = [];
  const misplaced: Misplaced[] = [];
  for (const relPath of all) {
    const abs = `${layout.rawReports}/${relPath}`;
    const m = PARTITION_RE.exec(relPath);
    if (!m || !CUSTOMER_ID_PATTERN.test(m[1]!) || !validDate(m[2]!)) {
      misplaced.push({
        path: abs,
        relPath,
        reason: 'not in a customer=<customerId>/date=<YYYY-MM-DD>/ partition folder',
      });
      continue;
    }
    const st = statSync(abs, { throwIfNoEntry: false });
    if (st === undefined) continue; // quarantined meanwhile
    files.push({ path: abs, relPath, customerId: m[1]!, date: m[2]!, size: st.size, mtimeMs: st.mtimeMs });
  }
  return { files, misplaced };
}

/**
 * The `.parquet` files under the landing root (relPaths, sorted) but those that a placed compacted
 * file of their folder covers. A covered file is skipped by name as the folder is read, before
 * any other work on it: a day of 5-second flushes leaves thousands of them until their grace time
 * is out (compaction/retire.ts), and a stat of each, then the string work on each, cost the plan
 * more than the rest of it (on bench:tick's full day, 17,000 covered files: 60-85 ms a listing,
 * twice a run, against the readdir's 15-20 ms).
 */
function listLanding(layout: WarehouseLayout, records: RecordsByPartition): string[] {
  const out: string[] = [];
  const walk = (abs: string, rel: string) => {
    const entries = readdirEntriesSyncOrEmpty(abs);
    const covered = coveredIn(rel, entries, records.get(rel));
    for (const e of entries) {
      if (e.isDirectory()) walk(`${abs}/${e.name}`, rel === '' ? e.name : `${rel}/${e.name}`);
      else if (e.name.endsWith('.parquet') && !covered.has(e.name)) out.push(rel === '' ? e.name : `${rel}/${e.name}`);
    }
  };
  walk(layout.rawReports, '');
  return out.sort();
}

/** One partition folder's files (relPaths, sorted), as listLanding lists them; not its subfolders. */
function listLandingFolder(layout: WarehouseLayout, folder: string, records: readonly CompactionRecord[] | undefined): string[] {
  const entries = readdirEntriesSyncOrEmpty(`${layout.rawReports}/${folder}`);
  const covered = coveredIn(folder, entries, records);
  return entries
    .filter((e) => !e.isDirectory() && e.name.endsWith('.parquet') && !covered.has(e.name))
    .map((e) => `${folder}/${e.name}`)
    .sort();
}

/** The names of a folder's entries that its records cover, where their compacted file is among the entries. */
function coveredIn(folder: string, entries: readonly Dirent[], records: readonly CompactionRecord[] | undefined): ReadonlySet<string> {
  if (!records || records.length === 0) return coveredNamesOf(folder, [], () => false);
  const compacted = new Set(records.map((r) => r.compacted));
  const listed = new Set<string>();
  for (const e of entries) if (compacted.has(e.name)) listed.add(e.name);
  return coveredNamesOf(folder, records, (name) => listed.has(name));
}

export interface FileSchema {
  /**
   * Column name → DuckDB type, for the columns of docs/sdk-ingest.md present in the file and the
   * warehouse's provenance columns (report-columns.ts PROVENANCE_COLUMNS) when it has them.
   */
  columns: Map<string, string>;
}

export type SchemaVerdict = { ok: true; schema: FileSchema } | { ok: false; reason: string; detail: string };

/** DuckDB's message without file paths, which must not leak into reasons shown to users. */
export function cleanDuckDbMessage(message: string, file: string): string {
  return message.split(file).join('<file>').split('\n')[0]!.slice(0, 500);
}

/**
 * Whether a DuckDB error is about the data read (a broken page, a value that does not convert)
 * rather than about the statement or the machine. Only those make a file bad: a bug of ours must
 * fail the run, not send good files to quarantine.
 */
export function isFileError(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : String(err);
  if (/out of memory|No space left|Too many open files/i.test(msg)) return false;
  return /^(IO Error|Invalid Input Error|Conversion Error|Out of Range Error|Invalid Error|Serialization Error)\b/.test(msg);
}

/**
 * `checkSchema` of many files at once: the footers of all of them are read in one statement
 * (parquet_schema), files are grouped by their exact Parquet schema (every field's name, types,
 * repetition and nesting, which is all DuckDB derives a column's type from), and one file of each
 * group is described and checked for the whole group: files from one writer share one schema,
 * so a batch of hundreds of files costs a few DESCRIBEs instead of one each. When the footers
 * cannot all be read in one statement (a broken file), each file is checked alone.
 */
export async function checkSchemas(s: DbSession, files: readonly string[]): Promise<Map<string, SchemaVerdict>> {
  const out = new Map<string, SchemaVerdict>();
  if (files.length === 0) return out;
  let signatures: { file_name: string; sig: string }[] = [];
  try {
    signatures = await s.all(
      `SELECT file_name,
              string_agg(concat_ws('|', name, type, type_length, repetition_type, num_children, converted_type,
                                   scale, precision, logical_type), ';' ORDER BY column_id) AS sig
       FROM parquet_schema(${fileList(files)}) GROUP BY file_name`,
    );
  } catch (err) {
    if (!isFileError(err)) throw err;
  }
  const bySig = new Map<string, SchemaVerdict>();
  const sigOf = new Map(signatures.map((r) => [r.file_name, r.sig]));
  for (const file of files) {
    const sig = sigOf.get(file);
    if (sig === undefined) {
      out.set(file, await checkSchema(s, file));
      continue;
    }
    let verdict = bySig.get(sig);
    if (verdict === undefined) {
      verdict = await checkSchema(s, file);
      // A verdict of an unreadable file is that file's alone.
      if (verdict.ok || verdict.reason !== 'not a readable Parquet file') bySig.set(sig, verdict);
    }
    out.set(file, verdict);
  }
  return out;
}

/** Read a file's schema (footer only) and check it against docs/sdk-ingest.md (and the provenance columns' types). */
export async function checkSchema(s: DbSession, file: string): Promise<SchemaVerdict> {
  let described: { column_name: string; column_type: string }[];
  try {
    described = await s.all(`DESCRIBE SELECT * FROM read_parquet(${quotedString(file)})`);
  } catch (err) {
    return { ok: false, reason: 'not a readable Parquet file', detail: cleanDuckDbMessage((err as Error).message, file) };
  }
  const present = new Map(described.map((d) => [d.column_name, d.column_type]));
  const columns = new Map<string, string>();
  const problems: string[] = [];
  for (const col of KNOWN_COLUMNS) {
    const type = present.get(col.name);
    if (type === undefined) {
      if (col.required) problems.push(`missing required column ${col.name}`);
      continue;
    }
    if (!typeAccepts(col, type)) {
      problems.push(`column ${col.name} is ${type}, expected ${col.type}`);
      continue;
    }
    columns.set(col.name, type);
  }
  if (problems.length > 0) {
    const missing = problems.some((p) => p.startsWith('missing'));
    return { ok: false, reason: missing ? 'lacks a required column' : 'a column has the wrong type', detail: problems.join('; ') };
  }
  return { ok: true, schema: { columns } };
}

/**
 * Move a bad file out of the landing area, with a `.reason.json` beside it. A file already gone
 * (another run quarantined it first) is not an error.
 */
export async function quarantineFile(
  layout: WarehouseLayout,
  file: { path: string; relPath: string },
  reason: string,
  detail: string,
  runId: string,
): Promise<QuarantinedFile | null> {
  const target = await freePath(path.join(layout.quarantine, file.relPath));
  try {
    await moveFile(file.path, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  await writeJsonDurable(`${target}.reason.json`, {
    file: `raw/session_reports/${file.relPath}`,
    reason,
    detail,
    runId,
    quarantinedAt: new Date().toISOString(),
  });
  return { relPath: file.relPath, reason, detail };
}
