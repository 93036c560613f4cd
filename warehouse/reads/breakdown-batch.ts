// Many breakdown questions over the same session classes in one statement (alert rules:
// alerts/rule-figures.ts): breakdown_parts.sql and breakdown_rows.sql, the breakdown route's own
// SQL, once per window asked, with the value grouped by being the index of each question that
// keeps the session (a session kept by three questions counts in three groups). Each group's row
// is then exactly the one-group breakdown of that question alone: the same sessions, the same
// sums, the same figures. The classes are read once for every window (the widest one's rows,
// materialized): reading the snapshot's files is most of the cost (each column of each file is a
// chunk to open and decompress). A question is a customer's streams or one stream, and filters;
// its conditions reach SQL as bound parameters ($q<i>_…), written from code constants.
import { VARCHAR } from '@duckdb/node-api';
import type { DbSession } from '../duckdb/index.ts';
import type { SqlParams, SqlTypes } from '../duckdb/index.ts';
import { pieceSql } from '../figures/index.ts';
import { breakdownFileSql, filterConditions, filterParams, NO_SESSIONS, snapshotWindowClass, type BreakdownFigures, type BreakdownFilters, type BreakdownRow } from './breakdowns.ts';
import type { ServedWindow } from '../figures/index.ts';

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

/** The rows of one window's questions (`indexes` into the batch) over the relation `classes`. */
function windowSql(windowClass: number, indexes: readonly number[], conditions: readonly string[]): string {
  const cases = indexes.map((i) => `CASE WHEN ${conditions[i]} THEN '${i}' END`);
  const parts = breakdownFileSql('breakdown_parts', {
    classes: 'classes',
    stream_filter: 'true',
    stream_group: 'CAST(NULL AS VARCHAR)',
    by_value: `unnest(list_filter([${cases.join(',\n    ')}], k -> k IS NOT NULL))`,
    dimension_filters: 'true',
  });
  // One statement holds several windows: the window's class is written as its number (a code constant).
  return pieceSql('breakdown_rows', { parts: `(${parts})` }).replaceAll('$max_class', String(windowClass));
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
  const selects = [...windows].map(([w, indexes]) => `SELECT * FROM (${windowSql(classOf(w), indexes, conditions)})`);
  const sql = `WITH classes AS MATERIALIZED (SELECT * FROM ${relation} WHERE class <= ${widest}${streamFilter})\n${selects.join('\nUNION ALL\n')}`;
  return { sql, params, types };
}

/** The one-group figures of each question (NO_SESSIONS where it keeps no session), in the questions' order. */
export async function queryBreakdownBatch(s: DbSession, relation: string, questions: readonly BatchQuestion[], classOf?: (w: ServedWindow) => number): Promise<BreakdownFigures[]> {
  if (questions.length === 0) return [];
  const { sql, params, types } = batchSql(relation, questions, classOf);
  const out: BreakdownFigures[] = questions.map(() => NO_SESSIONS);
  for (const { streamId: _s, value, ...figures } of await s.all<BreakdownRow>(sql, params, types)) out[Number(value)] = figures;
  return out;
}
