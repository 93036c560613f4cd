// Checks a batch of landed files (one or more customers and date partitions) before states are
// built from them, each file against the partition folder it lies in, quarantining every file
// that is unreadable, lacks a column, or holds rows that break docs/sdk-ingest.md, so that a bad
// file never stops the rollup of the others.
import type { DbSession } from '../duckdb/index.ts';
import { fileList, fillSql, sqlFile } from '../duckdb/index.ts';
import { emptyRawReportsSql } from '../session-reports/index.ts';
import { validateRows } from './validate-rows.ts';
import { checkSchemas, cleanDuckDbMessage, isFileError, quarantineFile, type LandedFile, type QuarantinedFile } from './landed-files.ts';
import { projectionSql, provenanceSql } from '../session-reports/index.ts';
import { STATE_COLUMNS } from '../session-reports/index.ts';
import type { WarehouseLayout } from '../layout.ts';
import type { Logger } from '../../lib/log.ts';

export interface LoadOutcome {
  /** Files that passed every check. */
  files: LandedFile[];
  quarantined: QuarantinedFile[];
  /** Columns of docs/sdk-ingest.md present in at least one of `files`. */
  presentColumns: string[];
  /** Columns present in at least one of some of `files` (one date of the batch). */
  presentColumnsOf(files: readonly LandedFile[]): string[];
  /** A file's columns with their types, in the file's order (`fileSchema`). */
  schemaOf(file: LandedFile): string;
}

/**
 * A file's schema as one string (a JSON list of [name, type] in the file's order): files with the
 * same string can be read together without matching columns by name (warehouse/publish/catalog.ts).
 */
export function fileSchema(columns: ReadonlyMap<string, string>): string {
  return JSON.stringify([...columns]);
}

/** The names of the columns of a `fileSchema` string. */
export function schemaColumns(schema: string): string[] {
  return (JSON.parse(schema) as [string, string][]).map(([name]) => name);
}

export interface LoadContext {
  s: DbSession;
  layout: WarehouseLayout;
  runId: string;
  log: Logger;
}

export async function screenFiles(
  ctx: LoadContext,
  landed: readonly LandedFile[],
): Promise<LoadOutcome> {
  const quarantined: QuarantinedFile[] = [];
  const quarantine = (file: LandedFile, reason: string, detail: string) => quarantineInto(ctx, quarantined, file, reason, detail);

  // 1. Schemas, from the files' footers.
  let files: LandedFile[] = [];
  const columnsOf = new Map<string, ReadonlyMap<string, string>>();
  const verdicts = await checkSchemas(ctx.s, landed.map((f) => f.path));
  for (const file of landed) {
    const verdict = verdicts.get(file.path)!;
    if (!verdict.ok) {
      await quarantine(file, verdict.reason, verdict.detail);
      continue;
    }
    files.push(file);
    columnsOf.set(file.path, verdict.schema.columns);
  }
  // Columns that at least one of the files still in play has (recomputed as files drop out).
  const presentIn = (list: readonly LandedFile[]) => new Set(list.flatMap((f) => [...columnsOf.get(f.path)!.keys()]));

  // Row rules (validate-rows.ts): every column, straight from the files, before anything casts.
  const bad = await validateRows(ctx.s, files.map((f) => ({ path: f.path, columns: columnsOf.get(f.path)! })));
  for (const file of files.filter((f) => bad.has(f.path))) await quarantine(file, bad.get(file.path)!.reason, bad.get(file.path)!.detail);
  files = files.filter((f) => !bad.has(f.path));

  const presentColumns = [...presentIn(files)].sort();
  return { files, quarantined, presentColumns, presentColumnsOf: (list) => [...presentIn(list)].sort(), schemaOf: (f) => fileSchema(columnsOf.get(f.path)!) };
}

/**
 * The state builders' one loop (partition-state.ts, layered-state.ts): `files` screened
 * (screenFiles), then `read` over those that passed. A file whose data pages are broken shows only
 * when read: then each file is read alone, the culprits quarantined, and `read` runs again over the
 * rest. A failure that is no file's fault is thrown (the run fails and is retried). Returns the
 * files `read` succeeded over, with what it returned.
 */
export async function readScreened<T>(ctx: LoadContext, files: readonly LandedFile[], read: (load: LoadOutcome) => Promise<T>): Promise<{ load: LoadOutcome; result: T }> {
  let load = files.length > 0 ? await screenFiles(ctx, files) : NO_FILES;
  for (;;) {
    try {
      return { load, result: await read(load) };
    } catch (err) {
      if (!isFileError(err) || load.files.length === 0) throw err;
      ctx.log.warn({ err: (err as Error).message.split('\n')[0] }, 'bulk read failed; reading files one by one');
      load = await withoutUnreadable(ctx, load, err);
    }
  }
}

/** The outcome of screening no file. */
const NO_FILES: LoadOutcome = { files: [], quarantined: [], presentColumns: [], presentColumnsOf: () => [], schemaOf: () => '' };

/** `load` without the files that cannot be read alone (quarantined); `err` again when every file can. */
async function withoutUnreadable(ctx: LoadContext, load: LoadOutcome, err: unknown): Promise<LoadOutcome> {
  const checked = await quarantineUnreadable(ctx, load.files, (f) => new Set(load.presentColumnsOf([f])), STATE_COLUMNS);
  if (checked.files.length === load.files.length) throw err; // not a file's fault: let the run fail and be retried
  return { ...load, files: checked.files, quarantined: [...load.quarantined, ...checked.quarantined], presentColumns: load.presentColumnsOf(checked.files) };
}

/**
 * Read each file alone into a scratch table, to find the files whose data pages are broken (they
 * only show when read), and quarantine them: after a bulk read over many files failed. Returns the
 * files that remain. A failure that is not a file's fault is thrown (the run fails and is retried).
 */
export async function quarantineUnreadable(
  ctx: LoadContext,
  files: readonly LandedFile[],
  columnsOf: (f: LandedFile) => ReadonlySet<string>,
  columns: readonly string[],
): Promise<{ files: LandedFile[]; quarantined: QuarantinedFile[] }> {
  const quarantined: QuarantinedFile[] = [];
  const good: LandedFile[] = [];
  await ctx.s.run(`DROP VIEW IF EXISTS raw_reports`).catch(() => {});
  for (const file of files) {
    try {
      await ctx.s.run(loadSql([file], columnsOf(file), columns, 'TABLE'));
      good.push(file);
    } catch (err) {
      if (!isFileError(err)) throw err;
      await quarantineInto(ctx, quarantined, file, 'not a readable Parquet file', cleanDuckDbMessage((err as Error).message, file.path));
    }
  }
  await ctx.s.run(`DROP TABLE IF EXISTS raw_reports`);
  return { files: good, quarantined };
}

/** Move `file` to quarantine (logged) and record it in `into`. */
async function quarantineInto(ctx: LoadContext, into: QuarantinedFile[], file: LandedFile, reason: string, detail: string): Promise<void> {
  ctx.log.warn({ file: file.relPath, reason, detail }, 'quarantining file');
  const q = await quarantineFile(ctx.layout, file, reason, detail, ctx.runId);
  if (q) into.push(q);
}

/**
 * `raw_reports` over `files` (load_raw.sql): a TABLE, or a VIEW that reads the files where used.
 * No file: the same relation over no rows, every column at its type.
 */
export function loadSql(files: readonly LandedFile[], present: ReadonlySet<string>, columns: readonly string[], kind: 'TABLE' | 'VIEW'): string {
  if (files.length === 0) return `CREATE OR REPLACE TEMP ${kind} raw_reports AS ${emptyRawReportsSql(projectionSql(columns, new Set()))} LIMIT 0`;
  return fillSql(sqlFile('load_raw'), {
    kind,
    files: fileList(files.map((f) => f.path)),
    projection: projectionSql(columns, present),
    provenance: provenanceSql(present),
    where: 'true',
  });
}
