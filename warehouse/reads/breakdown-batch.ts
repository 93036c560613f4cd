// Many breakdown questions over the same session classes in one statement (alert rules:
// alerts/rule-figures.ts): breakdown_parts.sql and breakdown_rows.sql, the breakdown route's own
// SQL, once per window asked, each session joined to the questions that keep it (their rows, a
// relation of list parameters) and the value grouped by being the question's index (a session
// kept by three questions counts in three groups). Each group's row
// is then exactly the one-group breakdown of that question alone: the same sessions, the same
// sums, the same figures. The classes are read once for every window (the widest one's rows,
// materialized): reading the snapshot's files is most of the cost (each column of each file is a
// chunk to open and decompress). A question is a customer's streams or one stream, and filters:
// a row of the questions' relation (its values bound as list parameters), tested by the route's
// filter conditions over its columns (one per dimension filtered on): the statement's text, and so
// its planning, do not grow with the questions.
// Only the columns its figures need are read (DuckDB prunes the others from the scan): the batch
// answers the alert rules' figures (BATCH_FIGURES, not avgPeerCount nor rebufferEvents), and a
// session's head holds its first report and the dimensions up to the last one a question filters
// on (in SESSION_DIMENSIONS order): the least head over those is the prefix of the least head over
// all of them, so each session keeps exactly the values the route's rule gives it.
import { INTEGER, LIST, VARCHAR, listValue, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import type { DbSession } from '../duckdb/index.ts';
import type { SqlParams, SqlTypes } from '../duckdb/index.ts';
import { pieceSql } from '../figures/index.ts';
import { breakdownFileSql, inList, NO_SESSIONS, snapshotWindowClass, type BreakdownFigures, type BreakdownFilters, type SessionDimension } from './breakdowns.ts';
import type { ServedWindow } from '../figures/index.ts';
import { SESSION_DIMENSIONS } from '../session-reports/index.ts';

/** The figures a batch answers (an alert rule's metrics): a row of breakdown_rows.sql's columns. */
export const BATCH_FIGURES = ['totalSessions', 'totalBytesFallback', 'avgOffloadRatio', 'avgBufferHealth', 'rebufferRatio', 'startupTimeP95Ms', 'p2pConnectionSuccess'] as const;
export type BatchFigures = Pick<BreakdownFigures, (typeof BATCH_FIGURES)[number]>;

export interface BatchQuestion {
  /** The customer whose sessions the question counts. */
  customerId: string;
  /** One stream of the customer's; null: every stream of theirs. */
  streamId: string | null;
  window: ServedWindow;
  filters: BreakdownFilters;
}

/** A question's list of `kind` values for `d` as a row of the questions' table: null when it has none (no condition). */
const listOrNull = (q: BatchQuestion, kind: 'keep' | 'drop', d: SessionDimension) => {
  const values = q.filters.get(d)?.[kind] ?? [];
  return values.length > 0 ? listValue([...values]) : null;
};

/** The questions' table's column of `kind` values of `d` (a code constant). */
const listColumn = (kind: 'keep' | 'drop', d: SessionDimension) => `q_${kind}_${d}`;

/** The session dimensions a session's head needs for `questions`' filters: those up to the last one filtered on (at least one). */
function headDimensions(questions: readonly BatchQuestion[]): readonly string[] {
  const last = Math.max(0, ...questions.flatMap((q) => [...q.filters.keys()].map((d) => SESSION_DIMENSIONS.indexOf(d))));
  return SESSION_DIMENSIONS.slice(0, last + 1);
}

/**
 * The questions as rows (the relation `batch_questions`, from list parameters: one per column,
 * whatever the number of questions): q_id (the index in the batch), q_customer, q_stream (null:
 * every stream of the customer), q_class (the window's class), and for each dimension some question
 * filters on, its keep and drop lists (null: no condition).
 */
function questionsSql(questions: readonly BatchQuestion[], classOf: (w: ServedWindow) => number, dims: readonly SessionDimension[], params: SqlParams, types: SqlTypes): string {
  const columns: [string, DuckDBValue[], DuckDBType][] = [
    ['q_id', questions.map((_, i) => i), INTEGER],
    ['q_customer', questions.map((q) => q.customerId), VARCHAR],
    ['q_stream', questions.map((q) => q.streamId), VARCHAR],
    ['q_class', questions.map((q) => classOf(q.window)), INTEGER],
    ...dims.flatMap((d) => (['keep', 'drop'] as const).map((kind): [string, DuckDBValue[], DuckDBType] => [listColumn(kind, d), questions.map((q) => listOrNull(q, kind, d)), LIST(VARCHAR)])),
  ];
  for (const [name, values, type] of columns) {
    params[name] = listValue(values);
    types[name] = LIST(type);
  }
  return `SELECT ${columns.map(([name]) => `unnest($${name}) AS ${name}`).join(', ')}`;
}

/**
 * The condition that the joined question keeps the session: for each dimension filtered on, its
 * keep list (when it has one) holds the session's value and its drop list (when it has one) does
 * not: the route's conditions (filterConditions), over the question's lists instead of parameters.
 */
function questionConditions(dims: readonly SessionDimension[]): string {
  const conditions = dims.flatMap((d) => [
    `(q.${listColumn('keep', d)} IS NULL OR ${inList(`q.${listColumn('keep', d)}`, d)})`,
    `(q.${listColumn('drop', d)} IS NULL OR NOT ${inList(`q.${listColumn('drop', d)}`, d)})`,
  ]);
  return conditions.length > 0 ? conditions.join('\n    AND ') : 'true';
}

/** The rows of one window's questions over the relation `classes`: each session joined to the questions of the window that count it. */
function windowSql(windowClass: number, headDims: readonly string[], filterDims: readonly SessionDimension[]): string {
  const parts = breakdownFileSql('breakdown_parts', {
    head_fields: ['first_report := first_report', ...headDims.map((d) => `${d} := ${d}`)].join(', '),
    head_columns: headDims.map((d) => `head.${d} AS ${d}`).join(', '),
    classes: 'classes',
    stream_filter: 'true',
    stream_group: 'CAST(NULL AS VARCHAR)',
    by_value: 'q.q_id',
    // Sessions never span customers: a session's customer is its stream's, the part before the
    // first colon (warehouse/ids.ts streamBelongsTo).
    questions: `\n  JOIN batch_questions AS q ON q.q_class = ${windowClass} AND q.q_customer = split_part(streamId, ':', 1) AND (q.q_stream IS NULL OR q.q_stream = streamId)`,
    dimension_filters: questionConditions(filterDims),
  });
  // One statement holds several windows: the window's class is written as its number (a code constant).
  const rows = pieceSql('breakdown_rows', { parts: `(${parts})` }).replaceAll('$max_class', String(windowClass));
  return `SELECT value, ${BATCH_FIGURES.join(', ')} FROM (${rows})`;
}

/**
 * The statement answering `questions` over `relation` (read_parquet of session class files, or a
 * table of short window classes with their `classOf`): one row per question that keeps a session,
 * `value` its index. Its text depends on the windows asked and the dimensions filtered on, not on
 * the questions, which are rows bound as list parameters (questionsSql): planning it costs the
 * same for 5 questions or 500 (a CASE and parameters per question made its planning as long as
 * reading the files).
 */
export function batchSql(relation: string, questions: readonly BatchQuestion[], classOf: (w: ServedWindow) => number = snapshotWindowClass): { sql: string; params: SqlParams; types: SqlTypes } {
  const params: SqlParams = {};
  const types: SqlTypes = {};
  const classes = [...new Set(questions.map((q) => classOf(q.window)))].sort((a, b) => a - b);
  const widest = Math.max(...classes);
  const streams = new Set(questions.map((q) => q.streamId));
  const [only] = streams;
  let streamFilter = '';
  if (streams.size === 1 && typeof only === 'string') {
    // One stream asked: the scan skips the others' row groups, as the route's does.
    streamFilter = ' AND streamId = $stream';
    params['stream'] = only;
    types['stream'] = VARCHAR;
  }
  const filterDims = SESSION_DIMENSIONS.filter((d) => questions.some((q) => q.filters.has(d)));
  const batch = questionsSql(questions, classOf, filterDims, params, types);
  const headDims = headDimensions(questions);
  const selects = classes.map((c) => windowSql(c, headDims, filterDims));
  const sql = `WITH classes AS MATERIALIZED (SELECT * FROM ${relation} WHERE class <= ${widest}${streamFilter}),
batch_questions AS MATERIALIZED (${batch})
${selects.join('\nUNION ALL\n')}`;
  return { sql, params, types };
}

/** The one-group figures of each question (NO_SESSIONS' where it keeps no session), in the questions' order. */
export async function queryBreakdownBatch(s: DbSession, relation: string, questions: readonly BatchQuestion[], classOf?: (w: ServedWindow) => number): Promise<BatchFigures[]> {
  if (questions.length === 0) return [];
  const { sql, params, types } = batchSql(relation, questions, classOf);
  const out: BatchFigures[] = questions.map(() => NO_SESSIONS);
  for (const { value, ...figures } of await s.all<BatchFigures & { value: string }>(sql, params, types)) out[Number(value)] = figures;
  return out;
}
