// Loading one stream's (or every stream's) deduplicated reports up to a snapshot's asOf into a
// session's `reports` table, from the raw files the snapshot was computed from: the base of every
// figure computed after the rollup (on-demand series, pilot reports).
import type { DbSession } from '../duckdb/index.ts';
import { dedupRawReports } from '../session-reports/index.ts';
import { fileList, fillSql, quotedString, sqlFile } from '../duckdb/index.ts';
import { emptyRawReportsSql } from '../session-reports/index.ts';
import { STATE_COLUMNS } from '../session-reports/index.ts';
import { projectionSql, provenanceSql } from '../session-reports/index.ts';

export interface StreamInputs {
  files: string[];
  presentColumns: string[];
}

export async function loadStreamReports(
  s: DbSession,
  inputs: StreamInputs,
  /** null: every stream of the files. */
  streamId: string | null,
  asOf: Date,
  columns: readonly string[] = STATE_COLUMNS,
  /** Only the reports with ts after it (null: every report up to asOf). */
  since: Date | null = null,
): Promise<void> {
  if (inputs.files.length === 0) {
    // The same relation, over no rows: every column at its type.
    await s.run(`CREATE OR REPLACE TEMP VIEW raw_reports AS ${emptyRawReportsSql(projectionSql(columns, new Set()))} LIMIT 0`);
  } else {
    await s.run(
      fillSql(sqlFile('stream_reports'), {
        files: fileList(inputs.files),
        projection: projectionSql(columns, new Set(inputs.presentColumns)),
        provenance: provenanceSql(new Set(inputs.presentColumns)),
        stream_filter: [streamId === null ? 'true' : `streamId = ${quotedString(streamId)}`, ...(since === null ? [] : [tsAfter(since)])].join(' AND '),
      }),
    );
  }
  await dedupRawReports(s, inputs.files, asOf);
  await s.run('DROP VIEW raw_reports');
}

/**
 * The condition `ts > since` over a landed file's column, as a literal (a view takes no
 * parameters), at the type the reports are read at: every copy of a report has the same ts, so
 * leaving out the copies before `since` before deduplicating keeps the same report of each later
 * one (dedup_raw.sql filters on asOf the same way), and the scan skips the row groups before it.
 */
function tsAfter(since: Date): string {
  return `CAST(ts AS TIMESTAMP) > make_timestamp(CAST(${since.getTime() * 1000} AS BIGINT))`;
}

/**
 * The inputs whose landed files may hold reports with ts in [fromMs, toMs]: a (customer, date)
 * partition holds the reports of its UTC date, every copy of a report has the same ts, and
 * deduplication is within a partition (docs/warehouse-state.md), so leaving the other dates out
 * changes no report of the range. A file outside any `date=` folder is kept.
 */
export function inputsWithin(inputs: StreamInputs, fromMs: number, toMs: number): StreamInputs {
  const first = new Date(fromMs).toISOString().slice(0, 10);
  const last = new Date(toMs).toISOString().slice(0, 10);
  const files = inputs.files.filter((f) => {
    const date = /[\\/]date=(\d{4}-\d{2}-\d{2})[\\/]/.exec(f)?.[1];
    return date === undefined || (date >= first && date <= last);
  });
  return { files, presentColumns: inputs.presentColumns };
}

