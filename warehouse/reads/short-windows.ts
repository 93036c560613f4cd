// Short windows (5m, 15m; docs/api.md "Short windows"), computed on demand and never part of a
// snapshot: the deduplicated reports of one stream's or one customer's last 15 minutes (ts in
// (asOf − 15 min, asOf]), read from the snapshot's landed files of the dates those minutes meet,
// made into session classes of their own by the snapshot's SQL (session_classes.sql over
// report_pieces.sql, each report a piece): class 1 holds the 5m window's part of a session, class
// 2 the rest of its 15m window's. The breakdown SQL then runs over them unchanged, the window's
// class said (BreakdownQuery.maxClass): the same figures, by the same definitions, exact to the
// report at both edges (a report at asOf − 5 min exactly is out of the 5m window and in the 15m one).
import type { DbSession } from '../duckdb/index.ts';
import { pieceSql, SHORT_WINDOWS, SHORT_WINDOW_NAMES, WINDOWS, type ServedWindow, type ShortWindowName } from '../figures/index.ts';
import { breakdownFileSql, windowClassParams } from './breakdowns.ts';
import { inputsWithin, loadStreamReports, type StreamInputs } from './stream-session-reports.ts';
import { STATE_COLUMNS } from '../session-reports/index.ts';

/** How far back a short window reaches: the widest one (15 min). */
export const SHORT_SPAN_SECONDS = Math.max(...SHORT_WINDOWS.map((w) => w.seconds));

/** A short window's class in short window classes (1 for 5m, 2 for 15m). */
export function shortWindowClass(w: ShortWindowName): number {
  return SHORT_WINDOW_NAMES.indexOf(w) + 1;
}

/** The class of a window in short window classes, for a batch of questions (every one short). */
export function shortClassOf(w: ServedWindow): number {
  const i = (SHORT_WINDOW_NAMES as readonly string[]).indexOf(w);
  if (i < 0) throw new Error(`the window ${w} is not a short window`);
  return i + 1;
}

/**
 * The parameters of session_classes.sql (window_class.sql) that class reports by the short
 * windows: their lengths first, then the snapshot's narrowest ones to fill the list (no report read
 * is older than the widest short window, so only classes 1 and 2 occur).
 */
export function shortClassParams(asOf: Date): ReturnType<typeof windowClassParams> {
  const lengths = [...SHORT_WINDOWS.map((w) => w.seconds), ...WINDOWS.flatMap((w) => (w.seconds === null ? [] : [w.seconds]))].slice(0, 4);
  return windowClassParams(asOf, lengths);
}

/**
 * The short window classes of one stream's (or, null, every stream's) reports of `inputs` with
 * asOf − 15 min < ts <= asOf, as the table `table` (a plain table of the session's database, not a
 * temporary one: other sessions of the same instance read it). Nothing before asOf − 15 min is read
 * but the landed files' statistics (their dates first: inputsWithin).
 */
export async function createShortWindowClasses(s: DbSession, inputs: StreamInputs, streamId: string | null, asOf: Date, table: string): Promise<void> {
  const sinceMs = asOf.getTime() - SHORT_SPAN_SECONDS * 1000;
  await loadStreamReports(s, inputsWithin(inputs, sinceMs, asOf.getTime()), streamId, asOf, STATE_COLUMNS, new Date(sinceMs));
  const { params, types } = shortClassParams(asOf);
  await s.run(breakdownFileSql('report_session_classes', { pieces: `(${pieceSql('report_pieces', { source: 'reports' })})` }), params, types);
  // Sorted by stream: a read of one stream's skips the others' (as in a snapshot's class files).
  await s.run(`CREATE TABLE ${table} AS SELECT * FROM report_session_classes ORDER BY streamId, sessionId`);
  await s.run('DROP TABLE report_session_classes');
  await s.run('DROP TABLE reports');
}
