// Loads a batch of one customer's landed files (one or more date partitions) into the session's `raw_reports` table, quarantining every
// file that is unreadable, lacks a column, or holds rows that break session-report.md, so that a
// bad file never stops the rollup of the others.
import { LIST, VARCHAR, listValue } from '@duckdb/node-api';
import { createEmptyTable, emptyRawReportsSql, fileList, fillSql, sqlFile, toNumber, type DbSession } from './duckdb.ts';
import { checkSchema, cleanDuckDbMessage, quarantineFile, type LandedFile, type QuarantinedFile } from './landing.ts';
import { projectionSql, ROLLUP_COLUMNS } from './report-columns.ts';
import { STREAM_ID_REGEX_SQL } from './ids.ts';
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

interface RowCheck {
  filename: string;
  rows: bigint;
  null_required: bigint | number;
  malformed_stream_ids: bigint | number;
  foreign_customer: bigint | number;
  foreign_date: bigint | number;
  negative_counters: bigint | number;
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
  const columnsOf = new Map<string, string[]>();
  for (const file of landed) {
    const verdict = await checkSchema(ctx.s, file.path);
    if (!verdict.ok) {
      await quarantine(file, verdict.reason, verdict.detail);
      continue;
    }
    files.push(file);
    columnsOf.set(file.path, [...verdict.schema.columns.keys()]);
  }
  // Columns that at least one of the files still in play has (recomputed as files drop out).
  const presentIn = (list: readonly LandedFile[]) => new Set(list.flatMap((f) => columnsOf.get(f.path)!));

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

  // 3. Row rules: ids, partition membership, counters.
  const checks = await ctx.s.all<RowCheck>(sqlFile('validate_rows'), {
    customer: ctx.customerId,
    stream_id_regex: STREAM_ID_REGEX_SQL,
  });
  const bad = new Map<string, string>();
  for (const c of checks) {
    const problems: string[] = [];
    const n = (v: bigint | number) => toNumber(v);
    if (n(c.null_required) > 0) problems.push(`${n(c.null_required)} rows with a null reportId, sessionId, streamId or ts`);
    if (n(c.malformed_stream_ids) > 0) problems.push(`${n(c.malformed_stream_ids)} rows with a malformed streamId`);
    if (n(c.foreign_customer) > 0) problems.push(`${n(c.foreign_customer)} rows of another customer than customer=${ctx.customerId}`);
    if (n(c.foreign_date) > 0) problems.push(`${n(c.foreign_date)} rows whose UTC date is not the folder's date`);
    if (n(c.negative_counters) > 0) problems.push(`${n(c.negative_counters)} rows with negative counters`);
    if (problems.length > 0) bad.set(c.filename, problems.join('; '));
  }
  if (bad.size > 0) {
    for (const file of files.filter((f) => bad.has(f.path))) {
      const detail = bad.get(file.path)!;
      const reason = detail.includes('another customer') || detail.includes("folder's date")
        ? 'holds rows of another partition'
        : 'holds rows that break the session report contract';
      await quarantine(file, reason, detail);
    }
    files = files.filter((f) => !bad.has(f.path));
    await ctx.s.run(
      `DELETE FROM raw_reports WHERE list_contains($bad, filename)`,
      { bad: listValue([...bad.keys()]) },
      { bad: LIST(VARCHAR) },
    );
  }

  const { rows } = await ctx.s.one<{ rows: bigint }>(`SELECT count(*) AS rows FROM raw_reports`);
  const presentColumns = [...presentIn(files)].sort();
  return { files, quarantined, presentColumns, presentColumnsOf: (list) => [...presentIn(list)].sort(), rows: toNumber(rows) };
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

function loadSql(files: readonly LandedFile[], present: ReadonlySet<string>): string {
  return fillSql(sqlFile('load_raw'), {
    files: fileList(files.map((f) => f.path)),
    projection: projectionSql(ROLLUP_COLUMNS, present),
    where: 'true',
  });
}
