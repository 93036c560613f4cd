// SELECT lists of the text exports: every contract column, ts as ISO 8601 UTC with microseconds,
// and in CSV the maps as JSON text (docs/api.md) and formula-like strings neutralised.
// DuckDB's own CSV and JSON writers format the rows.
import { REPORT_COLUMNS } from '../../warehouse/session-reports/index.ts';

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const ISO_US = `'%Y-%m-%dT%H:%M:%S.%fZ'`;

/**
 * A CSV string cell that a spreadsheet would read as a formula (starting with =, +, -, @, tab or
 * carriage return) gets a leading apostrophe, as OWASP recommends against CSV injection; numbers
 * are other columns and stay as they are.
 */
const neutralised = (id: string) => `CASE WHEN left(${id}, 1) IN ('=', '+', '-', '@', chr(9), chr(13)) THEN '''' || ${id} ELSE ${id} END`;

function textColumns(csv: boolean): string {
  const mapsAsJsonText = csv;
  return REPORT_COLUMNS.map((c) => {
    const id = ident(c.name);
    if (c.family === 'string' && csv) return `${neutralised(id)} AS ${id}`;
    if (c.family === 'timestamp') return `strftime(${id}, ${ISO_US}) AS ${id}`;
    if (c.family === 'map' && mapsAsJsonText) return `CAST(to_json(${id}) AS VARCHAR) AS ${id}`;
    return id;
  }).join(', ');
}

export const CSV_COLUMNS_SQL = textColumns(true);
export const NDJSON_COLUMNS_SQL = textColumns(false);
export const CSV_HEADER = `${REPORT_COLUMNS.map((c) => c.name).join(',')}\n`;
