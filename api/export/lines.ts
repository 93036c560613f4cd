// SELECT lists of the text exports: every contract column, ts as ISO 8601 UTC with microseconds,
// and in CSV the maps as JSON text (api-decisions.md). DuckDB's own CSV and JSON writers format
// the rows.
import { REPORT_COLUMNS } from '../../warehouse/report-columns.ts';

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const ISO_US = `'%Y-%m-%dT%H:%M:%S.%fZ'`;

function textColumns(mapsAsJsonText: boolean): string {
  return REPORT_COLUMNS.map((c) => {
    const id = ident(c.name);
    if (c.family === 'timestamp') return `strftime(${id}, ${ISO_US}) AS ${id}`;
    if (c.family === 'map' && mapsAsJsonText) return `CAST(to_json(${id}) AS VARCHAR) AS ${id}`;
    return id;
  }).join(', ');
}

export const CSV_COLUMNS_SQL = textColumns(true);
export const NDJSON_COLUMNS_SQL = textColumns(false);
export const CSV_HEADER = `${REPORT_COLUMNS.map((c) => c.name).join(',')}\n`;
