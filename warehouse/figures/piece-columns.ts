// The columns of a piece of partial sums, defined once: a report is a piece of its own
// (report_pieces.sql), a partition state stores pieces per hour and makes series of pieces per
// minute (state_pieces.sql), and windows and series combine pieces (stream_summaries.sql,
// session_buckets.sql). The SQL files get their column lists from here, through placeholders.
import { fillSql, sqlFile } from '../duckdb/index.ts';
import { SESSION_DIMENSIONS, STATE_COLUMNS } from '../session-reports/index.ts';
import { projectionSql } from '../session-reports/index.ts';

/** Which report of a piece is its earliest: by ts, then seq (nulls last), compared as a struct. */
export const FIRST_REPORT_TYPE = 'STRUCT(ts TIMESTAMP, seq INTEGER)';

export interface PieceColumn {
  name: string;
  /** Its type in a piece, and in the state files that store pieces (Parquet keeps BIGINT exactly). */
  type: 'BIGINT' | 'INTEGER' | 'DECIMAL(38, 9)' | 'TIMESTAMP' | typeof FIRST_REPORT_TYPE;
  /** How pieces combine into a larger one (min of the first report's struct: by ts, then seq). */
  combine: 'sum' | 'max' | 'min';
  /** Its value in the piece of one report, over the report's columns. */
  ofReport: string;
  /** Its value in the piece of a group of reports: what combining their own pieces gives. */
  ofReports: string;
  /** A series needs it (minute pieces, session buckets); the others serve windows only. */
  series: boolean;
  /**
   * A window's figure of it needs each session's own sum first (the mean over sessions of each
   * session's mean peerCount; whether a session is still active): stream_summaries.sql combines
   * those per session, and the others per stream.
   */
  bySession: boolean;
}

const piece = (
  name: string,
  type: PieceColumn['type'],
  combine: PieceColumn['combine'],
  ofReport: string,
  ofReports: string,
  uses: Pick<PieceColumn, 'series' | 'bySession'>,
): PieceColumn => ({ name, type, combine, ofReport, ofReports, ...uses });

/** In the order of the pieces' columns (state files, series rows of sessions). */
export const PIECE_COLUMNS: readonly PieceColumn[] = [
  piece('reports', 'BIGINT', 'sum', 'CAST(1 AS BIGINT)', 'count(*)', { series: true, bySession: false }),
  piece('off', 'BIGINT', 'sum', 'CAST(bytesOffloaded AS BIGINT)', 'CAST(sum(bytesOffloaded) AS BIGINT)', { series: true, bySession: false }),
  piece('fb', 'BIGINT', 'sum', 'CAST(bytesFallback AS BIGINT)', 'CAST(sum(bytesFallback) AS BIGINT)', { series: true, bySession: false }),
  piece('peer_sum', 'BIGINT', 'sum', 'CAST(peerCount AS BIGINT)', 'CAST(sum(peerCount) AS BIGINT)', { series: true, bySession: true }),
  piece('peer_n', 'BIGINT', 'sum', 'CAST(peerCount IS NOT NULL AS BIGINT)', 'count(peerCount)', { series: true, bySession: true }),
  piece('buf_sum', 'DECIMAL(38, 9)', 'sum', 'CAST(bufferHealth AS DECIMAL(38, 9))', 'sum(CAST(bufferHealth AS DECIMAL(38, 9)))', { series: true, bySession: false }),
  piece('buf_n', 'BIGINT', 'sum', 'CAST(bufferHealth IS NOT NULL AS BIGINT)', 'count(bufferHealth)', { series: true, bySession: false }),
  piece('stalls', 'BIGINT', 'sum', 'CAST(stallCount AS BIGINT)', 'CAST(sum(stallCount) AS BIGINT)', { series: true, bySession: false }),
  piece('last_ts', 'TIMESTAMP', 'max', 'ts', 'max(ts)', { series: false, bySession: false }),
  piece('last_final_ts', 'TIMESTAMP', 'max', 'CASE WHEN final THEN ts END', 'max(ts) FILTER (WHERE final)', { series: false, bySession: true }),
  // The quality figures (rebuffer ratio, P2P connection success, startup p95) and what the session
  // dimension rule needs (the earliest report), for breakdowns (breakdown_rows.sql).
  piece('stall_ms', 'BIGINT', 'sum', 'CAST(stallMs AS BIGINT)', 'CAST(sum(stallMs) AS BIGINT)', { series: false, bySession: false }),
  piece('watch_ms', 'BIGINT', 'sum', 'CAST(watchMs AS BIGINT)', 'CAST(sum(watchMs) AS BIGINT)', { series: false, bySession: false }),
  piece('p2p_att', 'BIGINT', 'sum', 'CAST(p2pConnAttempts AS BIGINT)', 'CAST(sum(p2pConnAttempts) AS BIGINT)', { series: false, bySession: false }),
  piece('p2p_ok', 'BIGINT', 'sum', 'CAST(p2pConnSuccesses AS BIGINT)', 'CAST(sum(p2pConnSuccesses) AS BIGINT)', { series: false, bySession: false }),
  // Set on a session's seq = 0 report only: one value per session, so a max keeps it.
  piece('startup_ms', 'INTEGER', 'max', 'startupMs', 'max(startupMs)', { series: false, bySession: true }),
  piece('first_report', FIRST_REPORT_TYPE, 'min', "{'ts': ts, 'seq': seq}", "min({'ts': ts, 'seq': seq})", { series: false, bySession: true }),
];

/**
 * The combined value of a column over a group of pieces. `keepType`: cast back to the piece's
 * type, where DuckDB widens it (a sum of BIGINT is a HUGEINT, which Parquet would store as a
 * DOUBLE; a sum of DECIMAL(38, s) and a max keep their type); otherwise left wide, for figures
 * computed further on.
 */
function combinedSql(col: PieceColumn, keepType: boolean): string {
  const combined = `${col.combine}(${col.name})`;
  return keepType && col.combine === 'sum' && col.type === 'BIGINT' ? `CAST(${combined} AS ${col.type})` : combined;
}

const selectList = (cols: readonly PieceColumn[], value: (col: PieceColumn) => string) =>
  cols.map((col) => `${value(col)} AS ${col.name}`).join(',\n  ');

const SERIES = PIECE_COLUMNS.filter((col) => col.series);
const BY_STREAM = PIECE_COLUMNS.filter((col) => !col.bySession);

/**
 * The quality figures (docs/metrics.md; docs/api.md, "Breakdown") of a group of sessions,
 * defined once: `total(col)` is the group's sum of a piece column, `startupP95` its sessions'
 * startup-time percentile. A breakdown's rows and a stream's summary of a window use this list.
 */
function qualityFigures(total: (col: string) => string, startupP95: string): string {
  return [
    `CAST(coalesce(${total('stalls')}, 0) AS BIGINT) AS rebufferEvents`,
    `coalesce(${total('stall_ms')} / nullif(${total('watch_ms')} + ${total('stall_ms')}, 0), 0.0) AS rebufferRatio`,
    `${startupP95} AS startupTimeP95Ms`,
    `${total('p2p_ok')} / nullif(${total('p2p_att')}, 0) AS p2pConnectionSuccess`,
  ].join(',\n  ');
}

/** A session row's mean peer count, as an exact DECIMAL (for a row with peer_n > 0). */
const SESSION_PEER_MEAN = 'CAST(peer_sum / peer_n AS DECIMAL(38, 12))';
/** The sum, over a group of session rows, of each session's mean peer count: avgPeerCount's numerator. */
const PEER_MEAN_SUM = `sum(${SESSION_PEER_MEAN}) FILTER (WHERE peer_n > 0)`;
/** The sessions of a group with a peer count: avgPeerCount's denominator. */
const PEER_SESSIONS = 'count(*) FILTER (WHERE peer_n > 0)';

/**
 * The delivery figures of the window definitions (docs/metrics.md) of a group of sessions,
 * defined once: bytes offloaded and from the CDN, the offload ratio of their sums, the mean of the
 * sessions' mean peer counts and the mean buffer health over reports. `total(col)` is the group's
 * sum of a piece column; `peerMeanSum` and `peerSessions` avgPeerCount's numerator and denominator;
 * `names` the columns' names (a series' bucket, or a summary's and a breakdown's).
 */
function deliveryFigures(
  total: (col: string) => string,
  peerMeanSum: string,
  peerSessions: string,
  names: { offloaded: string; fallback: string; ratio: string },
): string {
  const [off, fb] = [total('off'), total('fb')];
  return [
    `CAST(${off} AS BIGINT) AS ${names.offloaded}`,
    `CAST(${fb} AS BIGINT) AS ${names.fallback}`,
    `CASE WHEN ${off} + ${fb} > 0 THEN ${off} / (${off} + ${fb}) ELSE 0.0 END AS ${names.ratio}`,
    `coalesce(CAST(${peerMeanSum} AS DOUBLE) / nullif(${peerSessions}, 0), 0.0) AS avgPeerCount`,
    `coalesce(CAST(${total('buf_sum')} AS DOUBLE) / nullif(${total('buf_n')}, 0), 0.0) AS avgBufferHealth`,
  ].join(',\n  ');
}

const SERIES_NAMES = { offloaded: 'bytesOffloaded', fallback: 'bytesFallback', ratio: 'offloadRatio' };
const SUMMARY_NAMES = { offloaded: 'totalBytesOffloaded', fallback: 'totalBytesFallback', ratio: 'avgOffloadRatio' };
const sumOf = (col: string) => `sum(${col})`;

/** The 95th percentile (continuous) of `startup_ms` over a group of session rows (those that have one). */
const STARTUP_P95 = 'quantile_cont(startup_ms, 0.95)';
/** The same over a group of breakdown parts, each with its sessions' startup times (`startups`). */
const PARTS_STARTUP_P95 = "list_aggregate(flatten(list(startups)), 'quantile_cont', 0.95)";

/**
 * The placeholders of the generated piece lists, by name (code constants, never input):
 * `piece_dimensions` the session dimensions that pieces are grouped by (report-columns.ts);
 * `piece_columns` the columns' names; `piece_of_report` and `piece_of_reports` each column's
 * value for one report and for a group of reports; `series_piece_of_reports` the same for the
 * columns a series needs; `series_piece_sums` those combined at their own types;
 * `stream_piece_sums` the columns a window combines per stream, combined and left wide;
 * `stream_piece_kept_sums` the same at their own types (a summary base's parts, summary_base.sql);
 * `stream_piece_columns` their names;
 * `piece_sums` every column combined at its own type (a session's part of a window, a layer's
 * hour pieces); `startup_p95` the startup-time percentile over session rows;
 * `part_quality_figures` the quality figures over a breakdown's parts (breakdown_rows.sql: their
 * sums and their sessions' startup times); `series_quality_figures` the same over a series'
 * session rows of one bucket (series_quality.sql);
 * `window_quality_figures` the same over a stream's window sums `sw` and its sessions' percentile
 * `sc.startup_p95` (stream_summaries.sql); `series_delivery_figures` the delivery figures over
 * session rows under a series' names (series_of_buckets.sql, pilot_figures.sql);
 * `part_delivery_figures` the same over a breakdown's parts, under a summary's names;
 * `window_delivery_figures` the same over `sw` and the session counts `sc` (stream_summaries.sql);
 * `peer_mean_sum` and `peer_sessions` avgPeerCount's numerator and denominator over session rows;
 * `session_peer_mean` one session row's part of that numerator (window_summaries_incremental.sql);
 * `partial_series_figures` the delivery figures of a bucket from its partial sums (a state's coarse
 * sums, coarse_series_rows.sql); `coarse_update` each coarse sum's previous value `p` plus its
 * value after `a` minus before `b` (layer_coarse_delta.sql).
 */
export const PIECE_SQL: Readonly<Record<string, string>> = {
  piece_dimensions: SESSION_DIMENSIONS.join(', '),
  piece_columns: PIECE_COLUMNS.map((col) => col.name).join(', '),
  piece_of_report: selectList(PIECE_COLUMNS, (col) => col.ofReport),
  piece_of_reports: selectList(PIECE_COLUMNS, (col) => col.ofReports),
  series_piece_of_reports: selectList(SERIES, (col) => col.ofReports),
  series_piece_sums: selectList(SERIES, (col) => combinedSql(col, true)),
  stream_piece_sums: selectList(BY_STREAM, (col) => combinedSql(col, false)),
  stream_piece_kept_sums: selectList(BY_STREAM, (col) => combinedSql(col, true)),
  stream_piece_columns: BY_STREAM.map((col) => col.name).join(', '),
  piece_sums: selectList(PIECE_COLUMNS, (col) => combinedSql(col, true)),
  startup_p95: STARTUP_P95,
  part_quality_figures: qualityFigures(sumOf, PARTS_STARTUP_P95),
  series_quality_figures: qualityFigures(sumOf, STARTUP_P95),
  window_quality_figures: qualityFigures((col) => `sw.${col}`, 'sc.startup_p95'),
  series_delivery_figures: deliveryFigures(sumOf, PEER_MEAN_SUM, PEER_SESSIONS, SERIES_NAMES),
  part_delivery_figures: deliveryFigures(sumOf, 'sum(peer_mean_sum)', 'sum(peer_sessions)', SUMMARY_NAMES),
  window_delivery_figures: deliveryFigures((col) => `sw.${col}`, 'sc.peer_mean_sum', 'sc.peer_sessions', SUMMARY_NAMES),
  peer_mean_sum: PEER_MEAN_SUM,
  session_peer_mean: SESSION_PEER_MEAN,
  peer_sessions: PEER_SESSIONS,
  partial_series_figures: deliveryFigures((col) => col, 'peer_mean_sum', 'peer_sessions', SERIES_NAMES),
  coarse_update: [
    { name: 'sessions', type: 'BIGINT' },
    { name: 'peer_mean_sum', type: 'DECIMAL(38, 12)' },
    { name: 'peer_sessions', type: 'BIGINT' },
    ...SERIES,
  ]
    .map(({ name, type }) => `CAST(coalesce(p.${name}, 0) + coalesce(a.${name}, 0) - coalesce(b.${name}, 0) AS ${type}) AS ${name}`)
    .join(',\n  '),
};

/** The text of warehouse/<room>/<name>.sql with the piece lists and `parts` filled in. */
export function pieceSql(name: string, parts: Record<string, string> = {}): string {
  return fillSql(sqlFile(name), { ...PIECE_SQL, ...parts });
}

/**
 * report_pieces.sql over no report: the pieces' columns at their types, and no row (what a step
 * that found nothing hands on, so that the next one reads a typed relation).
 */
export function noPiecesSql(): string {
  return pieceSql('report_pieces', { source: `(SELECT ${projectionSql(STATE_COLUMNS, new Set())} WHERE false)` });
}
