// CSV and NDJSON export lines, formatted by DuckDB itself (vectorised) from the export query:
// strings and maps quoted, maps as JSON text in CSV, timestamps ISO 8601 UTC with microseconds.
import { REPORT_COLUMNS, type ReportColumn } from '../../warehouse/report-columns.ts';

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const ISO_US = `'%Y-%m-%dT%H:%M:%S.%fZ'`;

function csvCell(c: ReportColumn): string {
  const id = ident(c.name);
  switch (c.family) {
    case 'string':
      return `CASE WHEN ${id} IS NULL THEN '' ELSE '"' || replace(${id}, '"', '""') || '"' END`;
    case 'map':
      return `CASE WHEN ${id} IS NULL THEN '' ELSE '"' || replace(CAST(to_json(${id}) AS VARCHAR), '"', '""') || '"' END`;
    case 'timestamp':
      return `coalesce(strftime(${id}, ${ISO_US}), '')`;
    default:
      return `coalesce(CAST(${id} AS VARCHAR), '')`;
  }
}

export const CSV_HEADER = `${REPORT_COLUMNS.map((c) => c.name).join(',')}\n`;

/** SELECT list turning an export row into one CSV line (no newline). */
export const CSV_LINE_SQL = REPORT_COLUMNS.map(csvCell).join(` || ',' || `);

/** SELECT list turning an export row into one JSON object text. */
export const NDJSON_LINE_SQL = `CAST(to_json({${REPORT_COLUMNS.map(
  (c) => `${ident(c.name).replace(/"/g, "'")}: ${c.family === 'timestamp' ? `strftime(${ident(c.name)}, ${ISO_US})` : ident(c.name)}`,
).join(', ')}}) AS VARCHAR)`;
