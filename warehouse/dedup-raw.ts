// The deduplicated reports of a session's `raw_reports` (a view over landed files, or a table of
// them) as its `reports` table: dedup_raw.sql, then dedup_raw_delete.sql (dedup_reports.sql's rule).
import { TIMESTAMP } from '@duckdb/node-api';
import type { DbSession } from './duckdb/session.ts';
import { timestampParam } from './duckdb/param-values.ts';
import { sqlFile } from './sql-files.ts';

/** `reports`: the rows of `raw_reports` up to `asOf` (null: every row), one copy of each reportId. */
export async function dedupRawReports(s: DbSession, asOf: Date | null): Promise<void> {
  await s.run(sqlFile('dedup_raw'), { as_of: asOf === null ? null : timestampParam(asOf) }, { as_of: TIMESTAMP });
  await s.run(sqlFile('dedup_raw_delete'));
}
