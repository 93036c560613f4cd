// Loads a batch of one customer's landed files (one or more date partitions) into the session's `raw_reports` table, quarantining every
// file that is unreadable, lacks a column, or holds rows that break session-report.md, so that a
// bad file never stops the rollup of the others.
import { createEmptyTable, emptyRawReportsSql, fileList, fillSql, sqlFile, toNumber, type DbSession } from './duckdb.ts';
import { validateRows } from './validate-rows.ts';
import { checkSchema, cleanDuckDbMessage, isFileError, quarantineFile, type LandedFile, type QuarantinedFile } from './landing.ts';
import { projectionSql, ROLLUP_COLUMNS } from './report-columns.ts';
import type { WarehouseLayout } from './layout.ts';
import type { Logger } from '../lib/log.ts';

export interface LoadOutcome {
  /** Files whose rows are in `raw_reports`. */
  files: LandedFile[];
  quarantined: QuarantinedFile[];
  /** Columns of session-report.md present in at least one of `files`. */
  presentColumns: string[];
  /** Columns present in at least one of some of `files` (one date of the batch). */
  presentColumnsOf(files: readonly LandedFile[]): string[];
  /** Rows in `raw_reports`. */
  rows: number;
}

interface LoadContext {
  s: DbSession;
  layout: WarehouseLayout;
  customerId: string;
  runId: string;
  log: Logger;
}

export async function loadCustomerReports(
  ctx: LoadContext,
  landed: readonly LandedFile[],
): Promise<LoadOutcome> {
  const quarantined: QuarantinedFile[] = [];
  const quarantine = async (file: LandedFile, reason: string, detail: string): Promise<void> => {
    ctx.log.warn({ file: file.relPath, reason, detail }, 'quarantining file');
    const q = await quarantineFile(ctx.layout, file, reason, detail, ctx.runId);
    if (q) quarantined.push(q);
  };

  // 1. Schemas, from each file's footer.
  let files: LandedFile[] = [];
  const columnsOf = new Map<string, ReadonlyMap<string, string>>();
  for (const file of landed) {
    const verdict = await checkSchema(ctx.s, file.path);
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
  const bad = await validateRows(ctx.s, files.map((f) => ({ path: f.path, columns: columnsOf.get(f.path)! })), ctx.customerId);
  for (const file of files.filter((f) => bad.has(f.path))) await quarantine(file, bad.get(file.path)!.reason, bad.get(file.path)!.detail);
  files = files.filter((f) => !bad.has(f.path));

  // 2. One scan of every good file. A file whose data pages are broken only shows when read, so
  //    a failed bulk read is followed by a read of each file alone to find the culprits.
  for (;;) {
    if (files.length === 0) {
      await createEmptyTable(ctx.s, 'raw_reports', emptyRawReportsSql(projectionSql(ROLLUP_COLUMNS, new Set())));
      break;
    }
    try {
      await ctx.s.run(loadSql(files, presentIn(files)));
      break;
    } catch (err) {
      ctx.log.warn({ err: (err as Error).message.split('\n')[0] }, 'bulk read failed; reading files one by one');
      if (!isFileError(err)) throw err; // our SQL or the machine, not a file: fail the run
      const broken: LandedFile[] = [];
      for (const file of files) {
        try {
          await ctx.s.run(loadSql([file], presentIn([file])));
        } catch (fileErr) {
          if (!isFileError(fileErr)) throw fileErr;
          broken.push(file);
          await quarantine(file, 'not a readable Parquet file', cleanDuckDbMessage((fileErr as Error).message, file.path));
        }
      }
      if (broken.length === 0) throw err; // not a file's fault: let the run fail and be retried
      files = files.filter((f) => !broken.includes(f));
    }
  }

  const { rows } = await ctx.s.one<{ rows: bigint }>(`SELECT count(*) AS rows FROM raw_reports`);
  const presentColumns = [...presentIn(files)].sort();
  return { files, quarantined, presentColumns, presentColumnsOf: (list) => [...presentIn(list)].sort(), rows: toNumber(rows) };
}

function loadSql(files: readonly LandedFile[], present: ReadonlySet<string>): string {
  return fillSql(sqlFile('load_raw'), {
    files: fileList(files.map((f) => f.path)),
    projection: projectionSql(ROLLUP_COLUMNS, present),
    where: 'true',
  });
}
