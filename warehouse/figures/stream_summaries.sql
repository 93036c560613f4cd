-- Stream summaries for every window (docs/metrics.md, "Definitions"): a report counts in a
-- window when asOf - window < ts <= asOf.
-- <classed>: partial sums per stream and session with their window class (window_class.sql: 1
-- for 1h … 5 for all), none of which straddles asOf or a window's lower edge, and none after
-- asOf: a snapshot's session classes (session_classes.sql), one row per (stream, session, class).
-- Windows nest, so a window's figures add up the partial sums of its class and the narrower ones.
-- The sums that need no session are added up per stream; those that do are added up per session
-- once (`sessions`), then per window only for the few sessions whose rows are of several classes.
-- Besides the summary fields, each row carries the quality figures (rebufferEvents, rebufferRatio,
-- startupTimeP95Ms, p2pConnectionSuccess: breakdown_rows.sql's definitions, piece-columns.ts) and
-- the partial sums that let platform-wide and per-customer rows be added up from stream rows
-- (peer/buffer sums and counts).
-- DuckDB sums integers into HUGEINT; figures are cast back to BIGINT, which Parquet stores exactly.
-- Averages sum exact DECIMALs, not DOUBLEs: a parallel DOUBLE sum depends on the order threads
-- finish in, and the same input must always give the same figures, to the last digit, whether
-- they come from reports or from partition states.
-- Placeholders: <classed> (above); <stream_piece_sums> the piece columns a window adds up per
-- stream, combined (piece-columns.ts: the others need the session, below); <startup_p95>,
-- <peer_mean_sum>, <window_delivery_figures>, <window_quality_figures> (piece-columns.ts).
-- Parameters: $as_of (TIMESTAMP), $window_names (VARCHAR[5], narrowest first, the last unbounded),
-- $horizon_seconds.
-- Reads: <classed>. Writes: nothing (a query: one row per window and stream).
WITH
classed AS (
  SELECT * FROM {{classed}}
),
-- windows, sessions, session_windows (window_sessions.sql).
{{@window_sessions}},
-- What adds up over pieces (bytes, reports, buffer health, stalls, the latest report) is summed
-- per stream and class, then per window over its class and the narrower ones: no session needed.
stream_parts AS (
  SELECT
    streamId, class,
    {{stream_piece_sums}}
  FROM classed
  GROUP BY ALL
),
stream_windows AS (
  SELECT
    w.windowName, p.streamId,
    {{stream_piece_sums}}
  FROM stream_parts AS p
  JOIN windows AS w ON p.class <= w.class
  GROUP BY ALL
),
session_counts AS (
  SELECT
    windowName, streamId,
    count(*) AS sessions,
    {{peer_mean_sum}} AS peer_mean_sum,
    count(*) FILTER (WHERE peer_n > 0) AS peer_sessions,
    {{startup_p95}} AS startup_p95
  FROM session_windows
  GROUP BY ALL
),
-- Activity and the row's columns (stream_summary_row.sql), over each session's latest reports.
session_last AS (
  SELECT streamId, last_ts, last_final_ts FROM sessions
),
{{@stream_summary_row}}
FROM stream_windows AS sw
JOIN session_counts AS sc USING (windowName, streamId)
LEFT JOIN stream_activity AS a USING (streamId)
ORDER BY sw.windowName, sw.streamId
