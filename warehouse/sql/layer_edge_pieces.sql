-- The pieces of layered states in an hour a window edge cuts (the open hour after its first
-- instant), up to asOf. A session whose hour pieces there (layer_pieces.sql: per layer, session
-- and dimensions, with their earliest and latest reports) each lie wholly on one side of the edge
-- is served by those pieces, each with its earliest report as lo_us, so that window_class.sql
-- classes it as it would class each of its reports. A session that some piece shows on both sides
-- (its reports straddle the edge) is read from the layers' report files, each report a piece of
-- its own (report_pieces.sql's shape); the files are sorted by ts, so a read opens only the row
-- groups of that hour. The layers hold each report once (layered-state.ts), so no rule is applied
-- here, and a session is served one way or the other, never both.
-- Placeholders (a view's source: code constants, spliced): <hour_files>, <report_files> the
-- layers' hour and report files of the layered states of the hour's day; <hour_start> the hour's
-- first instant and <edge_us> the edge in it (a window's lower edge, or asOf), BIGINT literals
-- (µs since the epoch); <keep_after> whether what lies after the edge is kept (false for asOf's
-- own hour); <after> the hour's first instant and <up_to> the least of its last microsecond and
-- asOf, TIMESTAMP literals; <piece_dimensions>, <piece_columns> (piece-columns.ts).
-- Parameters: none.
-- Reads: <hour_files>, <report_files>. Writes: nothing (a query: window_pieces.sql's columns).
WITH hour_pieces AS (
  SELECT * FROM read_parquet({{hour_files}}, hive_partitioning = false)
  WHERE start_us = {{hour_start}} AND NOT at_start
),
straddling AS (
  SELECT DISTINCT streamId, sessionId FROM hour_pieces
  WHERE epoch_us(first_report.ts) <= {{edge_us}} AND epoch_us(last_ts) > {{edge_us}}
)
SELECT p.streamId, p.sessionId, epoch_us(p.first_report.ts) AS start_us, epoch_us(p.first_report.ts) AS lo_us, {{piece_dimensions}}, {{piece_columns}}
FROM hour_pieces p ANTI JOIN straddling s ON s.streamId = p.streamId AND s.sessionId = p.sessionId
WHERE {{keep_after}} OR epoch_us(p.first_report.ts) <= {{edge_us}}
UNION ALL
SELECT r.streamId, r.sessionId, epoch_us(r.ts) AS start_us, epoch_us(r.ts) AS lo_us, {{piece_dimensions}}, {{piece_columns}}
FROM read_parquet({{report_files}}, hive_partitioning = false) r SEMI JOIN straddling s ON s.streamId = r.streamId AND s.sessionId = r.sessionId
WHERE r.ts > {{after}} AND r.ts <= {{up_to}}
