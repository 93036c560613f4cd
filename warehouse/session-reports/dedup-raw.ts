// The deduplicated reports of a session's `raw_reports` (a view over landed files, or a table of
// them) as its `reports` table: report_files.sql, dedup_raw.sql, then dedup_raw_delete.sql
// (dedup_reports.sql's rule).
import { TIMESTAMP } from '@duckdb/node-api';
import type { DbSession } from '../duckdb/index.ts';
import { timestampParam } from '../duckdb/index.ts';
import { fileList, fillSql, sqlFile } from '../duckdb/index.ts';

/**
 * `reports`: the rows of `raw_reports` (read from `files`, in that order) up to `asOf` (null:
 * every row), one copy of each reportId.
 */
export async function dedupRawReports(s: DbSession, files: readonly string[], asOf: Date | null): Promise<void> {
  // No file (a stream without reports): `raw_reports` is an empty relation, and so is this.
  await s.run(fillSql(sqlFile('report_files'), { files: files.length === 0 ? 'CAST([] AS VARCHAR[])' : fileList(files) }));
  await s.run(sqlFile('dedup_raw'), { as_of: asOf === null ? null : timestampParam(asOf) }, { as_of: TIMESTAMP });
  await s.run(sqlFile('dedup_raw_delete'));
}
