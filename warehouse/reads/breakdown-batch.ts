// Many breakdown questions over the same session classes in one statement (alert rules:
// alerts/rule-figures.ts): breakdown_parts.sql and breakdown_rows.sql, the breakdown route's own
// SQL, once per window asked, with the value grouped by being the index of each question that
// keeps the session (a session kept by three questions counts in three groups). Each group's row
// is then exactly the one-group breakdown of that question alone: the same sessions, the same
// sums, the same figures. The classes are read once for every window (the widest one's rows,
// materialized): reading the snapshot's files is most of the cost (each column of each file is a
// chunk to open and decompress). A question is a customer's streams or one stream, and filters;
// its conditions reach SQL as bound parameters ($q<i>_…), written from code constants.
// Only the columns its figures need are read (DuckDB prunes the others from the scan): the batch
// answers the alert rules' figures (BATCH_FIGURES, not avgPeerCount nor rebufferEvents), and a
// session's head holds its first report and the dimensions up to the last one a question filters
// on (in SESSION_DIMENSIONS order): the least head over those is the prefix of the least head over
// all of them, so each session keeps exactly the values the route's rule gives it.
import { VARCHAR } from '@duckdb/node-api';
import type { DbSession } from '../duckdb/index.ts';
import type { SqlParams, SqlTypes } from '../duckdb/index.ts';
import { pieceSql } from '../figures/index.ts';
import { breakdownFileSql, filterConditions, filterParams, NO_SESSIONS, snapshotWindowClass, type BreakdownFigures, type BreakdownFilters } from './breakdowns.ts';
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

/** The condition that question `i` keeps a session, and its parameters. */
function questionCondition(q: BatchQuestion, i: number, params: SqlParams, types: SqlTypes): string {
  const prefix = `q${i}_`;
  const [name, value] = q.streamId !== null ? [`${prefix}stream`, q.streamId] : [`${prefix}customer`, `${q.customerId}:`];
  params[name] = value;
  types[name] = VARCHAR;
  filterParams(q.filters, prefix, params, types);
  const scope = q.streamId !== null ? `streamId = $${name}` : `starts_with(streamId, $${name})`;
  return [scope, ...filterConditions(q.filters, prefix)].join(' AND ');
}

/** The session dimensions a session's head needs for `questions`' filters: those up to the last one filtered on (at least one). */
function headDimensions(questions: readonly BatchQuestion[]): readonly string[] {
  const last = Math.max(0, ...questions.flatMap((q) => [...q.filters.keys()].map((d) => SESSION_DIMENSIONS.indexOf(d))));
  return SESSION_DIMENSIONS.slice(0, last + 1);
}

/**
 * The value expression of one window's questions (`indexes` into the batch): the indexes of the
 * questions that keep the session. The questions are grouped by customer under one CASE on the
 * session's customer (`customerParams`: the parameter holding each customer's `<id>:` prefix), so
 * that a session is tested against its own customer's questions only, not every question of the
 * batch (sessions never span customers).
 */
function valueSql(questions: readonly BatchQuestion[], indexes: readonly number[], conditions: readonly string[], customerParams: ReadonlyMap<string, string>): string {
  const byCustomer = new Map<string, number[]>();
  for (const i of indexes) byCustomer.set(questions[i]!.customerId, [...(byCustomer.get(questions[i]!.customerId) ?? []), i]);
  const branches = [...byCustomer].map(([customerId, own]) => {
    const cases = own.map((i) => `CASE WHEN ${conditions[i]} THEN '${i}' END`);
    return `WHEN starts_with(streamId, $${customerParams.get(customerId)!}) THEN list_filter([${cases.join(', ')}], k -> k IS NOT NULL)`;
  });
  return `unnest(CASE
    ${branches.join('\n    ')}
  END)`;
}

/** The rows of one window's questions (`indexes` into the batch) over the relation `classes`. */
function windowSql(windowClass: number, value: string, dims: readonly string[]): string {
  const parts = breakdownFileSql('breakdown_parts', {
    head_fields: ['first_report := first_report', ...dims.map((d) => `${d} := ${d}`)].join(', '),
    head_columns: dims.map((d) => `head.${d} AS ${d}`).join(', '),
    classes: 'classes',
    stream_filter: 'true',
    stream_group: 'CAST(NULL AS VARCHAR)',
    by_value: value,
    dimension_filters: 'true',
  });
  // One statement holds several windows: the window's class is written as its number (a code constant).
  const rows = pieceSql('breakdown_rows', { parts: `(${parts})` }).replaceAll('$max_class', String(windowClass));
  return `SELECT value, ${BATCH_FIGURES.join(', ')} FROM (${rows})`;
}

/**
 * The statement answering `questions` over `relation` (read_parquet of session class files, or a
 * table of short window classes with their `classOf`): one row per question that keeps a session,
 * `value` its index.
 */
export function batchSql(relation: string, questions: readonly BatchQuestion[], classOf: (w: ServedWindow) => number = snapshotWindowClass): { sql: string; params: SqlParams; types: SqlTypes } {
  const params: SqlParams = {};
  const types: SqlTypes = {};
  const conditions = questions.map((q, i) => questionCondition(q, i, params, types));
  const windows = new Map<ServedWindow, number[]>();
  for (const [i, q] of questions.entries()) windows.set(q.window, [...(windows.get(q.window) ?? []), i]);
  const widest = Math.max(...[...windows.keys()].map(classOf));
  const streams = new Set(questions.map((q) => q.streamId));
  const [only] = streams;
  let streamFilter = '';
  if (streams.size === 1 && typeof only === 'string') {
    // One stream asked: the scan skips the others' row groups, as the route's does.
    streamFilter = ' AND streamId = $stream';
    params['stream'] = only;
    types['stream'] = VARCHAR;
  }
  const customerParams = new Map<string, string>();
  for (const q of questions) {
    if (customerParams.has(q.customerId)) continue;
    const name = `c${customerParams.size}_prefix`;
    customerParams.set(q.customerId, name);
    params[name] = `${q.customerId}:`;
    types[name] = VARCHAR;
  }
  const dims = headDimensions(questions);
  const selects = [...windows].map(([w, indexes]) => windowSql(classOf(w), valueSql(questions, indexes, conditions, customerParams), dims));
  const sql = `WITH classes AS MATERIALIZED (SELECT * FROM ${relation} WHERE class <= ${widest}${streamFilter})\n${selects.join('\nUNION ALL\n')}`;
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
