// Relations over no rows that still have every column at its type, for the steps that found
// nothing to read.
import type { SqlParams, SqlTypes } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { quotedIdentifier } from '../duckdb/index.ts';
import { provenanceSql } from './projection.ts';

/**
 * An empty temp table `name` with the columns and types of `query` (its rows are not computed):
 * how a step that found nothing still hands the next one a typed relation.
 */
export async function createEmptyTable(s: DbSession, name: string, query: string, params?: SqlParams, types?: SqlTypes): Promise<void> {
  await s.run(`CREATE OR REPLACE TEMP TABLE ${quotedIdentifier(name)} AS SELECT * FROM (${query}) LIMIT 0`, params, types);
}

/** The empty typed `raw_reports` of a load with no file (what load_raw.sql would give). */
export function emptyRawReportsSql(projection: string): string {
  return `SELECT NULL::VARCHAR AS filename, NULL::BIGINT AS file_row_number, ${provenanceSql(new Set())}, ${projection}`;
}
