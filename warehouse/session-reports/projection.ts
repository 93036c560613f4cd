// Reading report columns in SQL at their docs/sdk-ingest.md types (warehouse/session-reports/columns.ts).
import { quotedIdentifier } from '../duckdb/index.ts';
import { PROVENANCE_COLUMNS, reportColumn } from './columns.ts';

/**
 * A SELECT list that reads `names` at their docs/sdk-ingest.md types: present columns are cast,
 * absent ones read as null (counters as 0, and null counters as 0 too). `present` holds the
 * columns that at least one file of the read has. Built from the catalog above, never from input.
 */
export function projectionSql(names: readonly string[], present: ReadonlySet<string>): string {
  return names
    .map((name) => {
      const col = reportColumn(name);
      const id = quotedIdentifier(col.name);
      if (!present.has(col.name)) {
        return `CAST(${col.counter ? '0' : 'NULL'} AS ${col.type}) AS ${id}`;
      }
      const cast = `CAST(${id} AS ${col.type})`;
      return `${col.counter ? `coalesce(${cast}, 0)` : cast} AS ${id}`;
    })
    .join(',\n  ');
}

/**
 * The provenance columns of a raw read (`_source_file`, `_source_row`), at their types, null where
 * no file of the read has them: what the deduplication rule ranks copies by, beside the file and
 * row (dedup_reports.sql). `present` as in projectionSql.
 */
export function provenanceSql(present: ReadonlySet<string>): string {
  return projectionSql(PROVENANCE_COLUMNS.map((c) => c.name), present);
}
