-- The reports of layered states that lie in an hour a window edge cuts (the open hour after its
-- first instant) and at or before asOf, each a piece of its own (report_pieces.sql's shape),
-- read from the layers' report files, which are sorted by ts: a read opens only the row groups
-- of that hour. The layers hold each report once (layered-state.ts), so no rule is applied here.
-- Placeholders (a view's source: code constants, spliced): <files> the report files of the
-- layered states of the hour's day; <after> the hour's first instant and <up_to> the least of its
-- last microsecond and asOf, TIMESTAMP literals (one range on ts, which row-group statistics
-- serve); <piece_dimensions>, <piece_columns> (piece-columns.ts).
-- Parameters: none.
-- Reads: <files>. Writes: nothing (a query: window_pieces.sql's columns).
SELECT streamId, sessionId, epoch_us(ts) AS start_us, epoch_us(ts) AS lo_us, {{piece_dimensions}}, {{piece_columns}}
FROM read_parquet({{files}}, hive_partitioning = false)
WHERE ts > {{after}} AND ts <= {{up_to}}
