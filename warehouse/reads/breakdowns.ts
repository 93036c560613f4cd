// Breakdowns by session dimension (breakdown_rows.sql over breakdown_parts.sql over
// session_classes.sql): the SQL's lists of dimensions, the typed filters and their bound
// parameters, and the rows read back. Dimension names are code constants; filter values reach SQL
// only as bound parameters.
import { BIGINT, INTEGER, LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import type { DbSession } from '../duckdb/index.ts';
import { timestampParam, type SqlParams, type SqlTypes } from '../duckdb/index.ts';
import { PIECE_COLUMNS, pieceSql } from '../figures/index.ts';
import { fileList } from '../duckdb/index.ts';
import { SESSION_DIMENSIONS } from '../session-reports/index.ts';
import { isShortWindow, WINDOWS, WINDOW_NAMES, type ServedWindow, type WindowName } from '../figures/index.ts';
import type { StreamSummary } from '../snapshots/index.ts';

export type SessionDimension = (typeof SESSION_DIMENSIONS)[number];

/** The dimensions in the API's order (the `by` values and the filters' names). */
export const BREAKDOWN_DIMENSIONS: readonly SessionDimension[] = [...SESSION_DIMENSIONS].sort();

export function isSessionDimension(v: string): v is SessionDimension {
  return (SESSION_DIMENSIONS as readonly string[]).includes(v);
}

/** Values a filter keeps or drops for one dimension (null: the value null). */
export interface DimensionFilter {
  keep: readonly (string | null)[];
  drop: readonly (string | null)[];
}

/** Filters by dimension: several of one dimension are alternatives, of different ones all apply. */
export type BreakdownFilters = ReadonlyMap<SessionDimension, DimensionFilter>;

export const NO_FILTERS: BreakdownFilters = new Map();

/** The summary's figures (their definitions, docs/metrics.md) and the quality figures. */
export type BreakdownFigures = Pick<
  StreamSummary,
  'totalSessions' | 'totalBytesOffloaded' | 'totalBytesFallback' | 'avgOffloadRatio' | 'avgPeerCount' | 'avgBufferHealth'
> & {
  rebufferEvents: number;
  rebufferRatio: number;
  startupTimeP95Ms: number | null;
  p2pConnectionSuccess: number | null;
};

export type BreakdownRow = BreakdownFigures & {
  /** The stream (per-stream rows only), else null. */
  streamId: string | null;
  /** The dimension's value (null: sessions without one, or no `by`). */
  value: string | null;
};

/** The figures of no session (a filter that keeps none, a window without reports). */
export const NO_SESSIONS: BreakdownFigures = {
  totalSessions: 0,
  totalBytesOffloaded: 0,
  totalBytesFallback: 0,
  avgOffloadRatio: 0,
  avgPeerCount: 0,
  avgBufferHealth: 0,
  rebufferEvents: 0,
  rebufferRatio: 0,
  startupTimeP95Ms: null,
  p2pConnectionSuccess: null,
};

/**
 * Rows per row group of a customer's session class files: a read of one stream skips the others'
 * by their streamId statistics (the files are sorted by stream).
 */
export const SESSION_CLASSES_ROW_GROUP = 16_384;

/** The parameters of session_classes.sql (window_class.sql) at asOf: the bounded windows' lengths (the snapshot's unless given). */
export function windowClassParams(asOf: Date, lengths: readonly number[] = WINDOWS.flatMap((w) => (w.seconds === null ? [] : [w.seconds]))): { params: SqlParams; types: SqlTypes } {
  const bounded = lengths.map((seconds) => BigInt(seconds));
  return { params: { as_of: timestampParam(asOf), window_seconds: listValue(bounded) }, types: { as_of: TIMESTAMP, window_seconds: LIST(BIGINT) } };
}

/** A window's class in session_classes.sql (window_class.sql: 1 for 1h … 5 for all). */
export const windowClass = (w: WindowName): number => WINDOW_NAMES.indexOf(w) + 1;

/**
 * A window's class in a snapshot's session classes; a short window is none of them (its classes
 * are made on demand, short-windows.ts, and queries over them say their class: `maxClass`).
 */
export function snapshotWindowClass(w: ServedWindow): number {
  if (isShortWindow(w)) throw new Error(`the window ${w} is not classed in a snapshot's session classes (short-windows.ts)`);
  return windowClass(w);
}

const paramName = (kind: 'keep' | 'drop', d: SessionDimension, prefix = '') => `${prefix}${kind}_${d.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
/**
 * The condition that the session's value of `d` is in the list `list` (an SQL expression of
 * VARCHAR[]: a bound parameter, or a column of a batch's questions, breakdown-batch.ts), a NULL in
 * the list standing for the value null.
 */
export const inList = (list: string, d: SessionDimension) => `len(list_filter(${list}, v -> v IS NOT DISTINCT FROM ${d})) > 0`;

/** The placeholders of session_classes.sql and breakdown_parts.sql that do not depend on a query (code constants). */
const BREAKDOWN_SQL = {
  head_fields: ['first_report := first_report', ...SESSION_DIMENSIONS.map((d) => `${d} := ${d}`)].join(', '),
  head_columns: SESSION_DIMENSIONS.map((d) => `head.${d} AS ${d}`).join(', '),
  // The head of one report: its piece's first_report (piece-columns.ts), then its dimensions.
  report_head_fields: [`first_report := ${PIECE_COLUMNS.find((c) => c.name === 'first_report')!.ofReport}`, ...SESSION_DIMENSIONS.map((d) => `${d} := ${d}`)].join(', '),
};

/**
 * The conditions of `filters` over their bound lists `$<prefix>keep_<dim>` and
 * `$<prefix>drop_<dim>` (filterParams), each over the session's dimension columns.
 */
export function filterConditions(filters: BreakdownFilters, prefix = ''): string[] {
  const conditions: string[] = [];
  for (const [d, f] of filters) {
    if (f.keep.length > 0) conditions.push(inList(`$${paramName('keep', d, prefix)}`, d));
    if (f.drop.length > 0) conditions.push(`NOT ${inList(`$${paramName('drop', d, prefix)}`, d)}`);
  }
  return conditions;
}

/** The bound lists of filterConditions(filters, prefix), added to `params` and `types`. */
export function filterParams(filters: BreakdownFilters, prefix: string, params: SqlParams, types: SqlTypes): void {
  for (const [d, f] of filters) {
    for (const [kind, values] of [['keep', f.keep], ['drop', f.drop]] as const) {
      if (values.length === 0) continue;
      params[paramName(kind, d, prefix)] = listValue([...values]);
      types[paramName(kind, d, prefix)] = LIST(VARCHAR);
    }
  }
}

/**
 * The placeholders of breakdown_parts.sql that a query decides, written from code constants only
 * (dimension names; filter values are bound parameters): a statement tests the filters it has,
 * and groups by the column it asks for. Testing every dimension's (empty) lists for every session,
 * with the value chosen by a CASE over a parameter, made a one-stream breakdown about a seventh
 * slower.
 */
function querySql(q: BreakdownQuery): Record<string, string> {
  return {
    stream_filter: q.streamId !== null ? 'streamId = $stream' : 'true',
    stream_group: q.perStream === true ? 'streamId' : 'CAST(NULL AS VARCHAR)',
    by_value: q.by ?? 'CAST(NULL AS VARCHAR)',
    dimension_filters: filterConditionsSql(q.filters),
    questions: '',
  };
}

/** The filters' conditions (filterConditions) as one SQL condition; `true` without filters. */
function filterConditionsSql(filters: BreakdownFilters): string {
  const conditions = filterConditions(filters);
  return conditions.length > 0 ? conditions.join('\n    AND ') : 'true';
}

/**
 * The deduplicated reports of `source` from `from` on whose sessions `filters` keep, with the
 * breakdown's rule and conditions (filtered_reports.sql), as the temp view `kept_reports`.
 */
export async function keepFilteredReports(s: DbSession, source: string, from: Date, filters: BreakdownFilters): Promise<void> {
  const params: SqlParams = { from: timestampParam(from) };
  const types: SqlTypes = { from: TIMESTAMP };
  filterParams(filters, '', params, types);
  const sql = breakdownFileSql('filtered_reports', { source, dimension_filters: filterConditionsSql(filters) });
  // A view cannot hold parameters: the kept reports are a temp table of the session.
  await s.run(`CREATE OR REPLACE TEMP TABLE kept_reports AS ${sql}`, params, types);
}

/**
 * warehouse/<room>/<name>.sql with the breakdown and piece lists filled in: session_classes.sql (its
 * <pieces>, a relation with the session dimensions and lo_us), breakdown_parts.sql (its <classes>,
 * rows of session_classes.sql), or a file that includes them.
 */
export function breakdownFileSql(name: string, parts: Record<string, string>): string {
  return pieceSql(name, { ...BREAKDOWN_SQL, ...parts });
}

/** breakdown_parts.sql over `classes` (rows of session_classes.sql) for `q`. */
function partsSql(classes: string, q: BreakdownQuery): string {
  return breakdownFileSql('breakdown_parts', { classes, ...querySql(q) });
}

/** breakdown_rows.sql over `parts` (rows of breakdown_parts.sql). */
function rowsSql(parts: string): string {
  return pieceSql('breakdown_rows', { parts });
}

/** A breakdown's rows over `classes` (rows of session_classes.sql) for `q`, in one query. */
export function breakdownSql(classes: string, q: BreakdownQuery): string {
  return rowsSql(`(${partsSql(classes, q)})`);
}

export interface BreakdownQuery {
  window: ServedWindow;
  /** The window's class in the classes read when they are not a snapshot's (short windows: short-windows.ts). */
  maxClass?: number;
  /** One stream; null: every stream of the classes read. */
  streamId: string | null;
  /** null: one group of every kept session. */
  by: SessionDimension | null;
  filters: BreakdownFilters;
  /** Groups per stream too (the snapshot's stream quality rows). */
  perStream?: boolean;
}

/** The bound parameters of breakdown_parts.sql for `q` (those its text refers to, querySql). */
export function breakdownParams(q: BreakdownQuery): { params: SqlParams; types: SqlTypes } {
  const params: SqlParams = { max_class: q.maxClass ?? snapshotWindowClass(q.window) };
  const types: SqlTypes = { max_class: INTEGER };
  if (q.streamId !== null) {
    params['stream'] = q.streamId;
    types['stream'] = VARCHAR;
  }
  filterParams(q.filters, '', params, types);
  return { params, types };
}

/** The session classes of these snapshot files (one per customer), as a relation for breakdowns. */
export function sessionClassesRelation(files: readonly string[]): string {
  return `read_parquet(${fileList(files)})`;
}

/**
 * The rows of a breakdown over `classes` (a relation of session classes, or one per customer),
 * sorted (by totalSessions descending, then value). Over several customers, each one's parts are
 * made alone and the rows from all of them: the query holds one customer's sessions at a time
 * (the whole platform's at once took ~150 MB more, and kept it).
 */
export async function queryBreakdown(s: DbSession, classes: string | readonly string[], q: BreakdownQuery): Promise<BreakdownRow[]> {
  const relations = typeof classes === 'string' ? [classes] : classes;
  const { params, types } = breakdownParams(q);
  const [first, ...rest] = relations;
  if (first === undefined) return [];
  if (rest.length === 0) return s.all<BreakdownRow>(breakdownSql(first, q), params, types);
  await s.run(`CREATE OR REPLACE TEMP TABLE breakdown_parts AS ${partsSql(first, q)}`, params, types);
  try {
    for (const relation of rest) await s.run(`INSERT INTO breakdown_parts ${partsSql(relation, q)}`, params, types);
    return await s.all<BreakdownRow>(rowsSql('breakdown_parts'));
  } finally {
    await s.run('DROP TABLE IF EXISTS breakdown_parts');
  }
}

/**
 * Breakdowns of the whole of a session's `reports` (deduplicated, up to asOf: the `all` window),
 * per stream, by each of `dimensions`: the same SQL as the API's, over each report as a piece.
 */
export async function breakdownsOfReports(s: DbSession, asOf: Date, dimensions: readonly SessionDimension[]): Promise<Map<SessionDimension, BreakdownRow[]>> {
  const { params, types } = windowClassParams(asOf);
  await s.run(breakdownFileSql('report_session_classes', { pieces: `(${pieceSql('report_pieces', { source: 'reports' })})` }), params, types);
  try {
    const out = new Map<SessionDimension, BreakdownRow[]>();
    for (const by of dimensions) out.set(by, await queryBreakdown(s, 'report_session_classes', { window: 'all', streamId: null, by, filters: NO_FILTERS, perStream: true }));
    return out;
  } finally {
    await s.run('DROP TABLE IF EXISTS report_session_classes');
  }
}
