// The row rules of docs/sdk-ingest.md, checked straight from landed files before anything casts a
// value: every figure, export, pilot report and catalog view reads only files that passed them
// (a snapshot's manifest lists no other), so no cast downstream can fail on a value. The checks
// are generated from the column catalog (report-columns.ts): one cheap aggregate scan of the
// checked columns grouped by file (screen_rows.sql: min, max and counts), then an exact count,
// rule by rule (validate_rows.sql), of the few files the screen flags.
import type { DbSession } from '../duckdb/index.ts';
import { fileList, fillSql, sqlFile } from '../duckdb/index.ts';
import { cleanDuckDbMessage, isFileError } from './landed-files.ts';
import { familyOf, INT32_MAX, KNOWN_COLUMNS, mapValueType, type ReportColumn } from '../session-reports/index.ts';
import { STREAM_ID_REGEX_SQL } from '../ids.ts';

/** A file to check, with the DuckDB type of each contract column it stores (from its footer). */
export interface FileToCheck {
  path: string;
  columns: ReadonlyMap<string, string>;
}

export interface RowVerdict {
  reason: string;
  /** Names the column, the rule and the number of rows, e.g. "bufferHealth not finite (NaN or ±Infinity): 3 rows". */
  detail: string;
}

/** One (column, rule) pair checked per row. */
export interface RowRule {
  column: string;
  /** What is wrong with a row that breaks it, as shown in a quarantine reason. */
  rule: string;
  /** SQL condition, true on a row that breaks the rule. Built from the catalog, never from input. */
  broken: string;
}

const PARTITION_RULES = {
  malformed_stream_ids: 'streamId malformed',
  foreign_customer: 'streamId of another customer than the folder',
  foreign_date: "ts on another UTC date than the folder's",
} as const;

const UNSIGNED = /^(UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/;
const FITS_INT32 = /^(TINYINT|SMALLINT|INTEGER|UTINYINT|USMALLINT)$/;

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}


/**
 * The rules to check for files storing the columns as `stored` (column → the types it has in the
 * files; a column no file has is not checked: it reads as null, or 0 for counters). Rules that no
 * stored type can break (a NaN in an INTEGER column) are left out, to keep the scan cheap.
 */
export function rowRules(stored: ReadonlyMap<string, readonly string[]>): RowRule[] {
  const rules: RowRule[] = [];
  for (const col of KNOWN_COLUMNS) {
    const types = stored.get(col.name);
    if (!types || types.length === 0) continue;
    rules.push(...columnRules(col, types));
  }
  return rules;
}

function columnRules(col: ReportColumn, types: readonly string[]): RowRule[] {
  const id = quoteIdent(col.name);
  const rules: RowRule[] = [];
  const add = (rule: string, broken: string) => rules.push({ column: col.name, rule, broken });
  if (col.required) add('null', `${id} IS NULL`);
  if (col.family === 'timestamp') add('not finite (±infinity)', `NOT isfinite(${id})`);
  if (col.max === null) return rules;

  const isMap = col.family === 'map';
  const valueTypes = isMap ? types.map((t) => mapValueType(t) ?? 'DOUBLE') : types;
  const anyFloat = valueTypes.some((t) => familyOf(t) === 'float');
  const wantInteger = familyOf(isMap ? mapValueType(col.type)! : col.type) === 'integer';
  const allUnsigned = valueTypes.every((t) => UNSIGNED.test(t.toUpperCase()));
  const fitsBound = valueTypes.every((t) => FITS_INT32.test(t.toUpperCase())) && col.max >= INT32_MAX;
  // Comparisons are done on DOUBLE when a file stores floats (NaN sorts above everything in
  // DuckDB, so each rule but "not finite" only looks at finite values).
  const finite = anyFloat ? (v: string) => `isfinite(${v}) AND ` : () => '';
  const rule = (cond: (v: string) => string): string => {
    if (!isMap) return cond(anyFloat ? `CAST(${id} AS DOUBLE)` : id);
    const values = anyFloat ? `CAST(map_values(${id}) AS DOUBLE[])` : `map_values(${id})`;
    return `len(list_filter(${values}, v -> ${cond('v')})) > 0`;
  };
  if (anyFloat) rules.push({ column: col.name, rule: `${isMap ? 'a value ' : ''}not finite (NaN or ±Infinity)`, broken: rule((v) => `NOT isfinite(${v})`) });
  if (!allUnsigned) rules.push({ column: col.name, rule: `${isMap ? 'a value ' : ''}negative`, broken: rule((v) => `${finite(v)}${v} < 0`) });
  if (!fitsBound) rules.push({ column: col.name, rule: `${isMap ? 'a value ' : ''}above ${col.max}`, broken: rule((v) => `${finite(v)}${v} > ${col.max}`) });
  if (wantInteger && anyFloat) rules.push({ column: col.name, rule: `${isMap ? 'a value ' : ''}not a whole number`, broken: rule((v) => `${finite(v)}${v} <> trunc(${v})`) });
  return rules;
}

/**
 * Per column, a test over aggregates that is true whenever some row breaks one of the column's
 * rules (and may be true when none does: the exact count decides). Cheap: min, max and counts.
 */
export function columnScreens(stored: ReadonlyMap<string, readonly string[]>): string[] {
  const screens: string[] = [];
  for (const col of KNOWN_COLUMNS) {
    const types = stored.get(col.name);
    if (!types || types.length === 0) continue;
    const id = quoteIdent(col.name);
    const tests: string[] = [];
    if (col.required) tests.push(`count(*) > count(${id})`);
    if (col.name === 'streamId') tests.push(`NOT bool_and(starts_with(${id}, ${FOLDER_CUSTOMER} || ':') AND regexp_full_match(${id}, $stream_id_regex))`);
    if (col.family === 'timestamp') {
      const day = (agg: string) => `CAST(CAST(${agg}(${id}) AS TIMESTAMP) AS DATE)`;
      tests.push(`NOT isfinite(min(${id}))`, `NOT isfinite(max(${id}))`);
      tests.push(`${day('min')} <> ${FOLDER_DATE}`, `${day('max')} <> ${FOLDER_DATE}`);
    }
    if (col.max !== null) {
      const isMap = col.family === 'map';
      const valueTypes = isMap ? types.map((t) => mapValueType(t) ?? 'DOUBLE') : types;
      const anyFloat = valueTypes.some((t) => familyOf(t) === 'float');
      const wantInteger = familyOf(isMap ? mapValueType(col.type)! : col.type) === 'integer';
      const values = isMap ? `map_values(${id})` : null;
      // NaN sorts above everything in DuckDB: it makes max fail `<= bound`, as +Infinity does.
      const lo = isMap ? `min(list_min(${values}))` : `min(${id})`;
      const hi = isMap ? `max(list_max(${values}))` : `max(${id})`;
      tests.push(`${lo} < 0`, `NOT (${hi} <= ${col.max})`);
      if (wantInteger && anyFloat) {
        const frac = isMap ? `max(list_max(list_transform(CAST(${values} AS DOUBLE[]), v -> abs(v - trunc(v)))))` : `max(abs(CAST(${id} AS DOUBLE) - trunc(CAST(${id} AS DOUBLE))))`;
        tests.push(`NOT (${frac} = 0)`);
      }
    }
    screens.push(...tests.map((t) => `coalesce(${t}, false)`));
  }
  return screens;
}

const FOLDER_DATE = String.raw`CAST(regexp_extract(filename, 'date=(\d{4}-\d{2}-\d{2})', 1) AS DATE)`;
/** The customer of a file's partition folder (…/customer=<id>/date=<d>/<file>). */
const FOLDER_CUSTOMER = String.raw`regexp_extract(filename, 'customer=([^/]+)/date=[^/]+/[^/]+$', 1)`;

function storedTypes(files: readonly FileToCheck[]): Map<string, string[]> {
  const stored = new Map<string, string[]>();
  for (const f of files) {
    for (const [name, type] of f.columns) {
      const list = stored.get(name) ?? [];
      if (!list.includes(type)) list.push(type);
      stored.set(name, list);
    }
  }
  return stored;
}

/** The screening statement for `files` (one row per file: filename, suspect). */
export function screenSql(files: readonly FileToCheck[]): string {
  const screens = columnScreens(storedTypes(files));
  return fillSql(sqlFile('screen_rows'), {
    files: fileList(files.map((f) => f.path)),
    screens: screens.length > 0 ? `(${screens.join('\n    OR ')})` : 'false',
  });
}

/** The validation statement for `files` and the rules it checks (rule i is column r<i>). */
export function validationSql(files: readonly FileToCheck[]): { sql: string; rules: RowRule[] } {
  const rules = rowRules(storedTypes(files));
  // The SQL groups by streamId and ts, which every accepted file has (required columns).
  const sql = fillSql(sqlFile('validate_rows'), {
    files: fileList(files.map((f) => f.path)),
    row_checks: rules.length > 0 ? rules.map((r, i) => `count_if(${r.broken}) AS r${i}`).join(',\n    ') : '0 AS r_none',
    row_sums: rules.length > 0 ? rules.map((_r, i) => `sum(r${i}) AS r${i}`).join(',\n  ') : '0 AS r_none',
    folder_customer: FOLDER_CUSTOMER,
  });
  return { sql, rules };
}

/** A file's rows breaking each rule (r<i>) and each partition rule, by name. */
type CheckRow = Record<string, unknown> & { filename: string };

/**
 * Check the rows of `files` (which passed the schema check) against the partition folder each
 * lies in (customer and date from its path), all files of a batch in one statement.
 * Returns the bad ones, by path, with a reason naming each column, rule and row count. A file
 * whose data cannot even be read is bad too ("not a readable Parquet file"); an error that is
 * not a file's fault (memory, disk, our SQL) is thrown, to fail the run rather than the file.
 */
export async function validateRows(
  s: DbSession,
  files: readonly FileToCheck[],
): Promise<Map<string, RowVerdict>> {
  const bad = new Map<string, RowVerdict>();
  if (files.length === 0) return bad;
  try {
    for (const [path, verdict] of await checkOnce(s, files)) bad.set(path, verdict);
    return bad;
  } catch (err) {
    if (!isFileError(err)) throw err;
  }
  // A broken data page shows only when read: check each file alone to find the culprits.
  for (const file of files) {
    try {
      for (const [path, verdict] of await checkOnce(s, [file])) bad.set(path, verdict);
    } catch (err) {
      if (!isFileError(err)) throw err;
      bad.set(file.path, { reason: 'not a readable Parquet file', detail: cleanDuckDbMessage((err as Error).message, file.path) });
    }
  }
  return bad;
}

async function checkOnce(s: DbSession, all: readonly FileToCheck[]): Promise<Map<string, RowVerdict>> {
  // Screen every file cheaply; count rule by rule only in those the screen flags.
  const screened = await s.all<{ filename: string; suspect: boolean }>(screenSql(all), { stream_id_regex: STREAM_ID_REGEX_SQL });
  const suspect = new Set(screened.filter((r) => r.suspect).map((r) => r.filename));
  const files = all.filter((f) => suspect.has(f.path));
  if (files.length === 0) return new Map();
  const { sql, rules } = validationSql(files);
  const rows = await s.all<CheckRow>(sql, { stream_id_regex: STREAM_ID_REGEX_SQL });
  const bad = new Map<string, RowVerdict>();
  for (const row of rows) {
    const problems: string[] = [];
    let foreign = false;
    rules.forEach((r, i) => {
      const n = row[`r${i}`] as number;
      if (n > 0) problems.push(`${r.column} ${r.rule}: ${rowsText(n)}`);
    });
    for (const [key, label] of Object.entries(PARTITION_RULES)) {
      const n = row[key] as number;
      if (n === 0) continue;
      problems.push(`${label}: ${rowsText(n)}`);
      if (key !== 'malformed_stream_ids') foreign = true;
    }
    if (problems.length === 0) continue;
    bad.set(row.filename, {
      reason: foreign ? 'holds rows of another partition' : 'holds rows that break the session report contract',
      detail: problems.join('; '),
    });
  }
  return bad;
}

function rowsText(n: number): string {
  return n === 1 ? '1 row' : `${n} rows`;
}
