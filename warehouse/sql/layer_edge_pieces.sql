-- The reports of layered states that lie in the hours a window edge cuts (the open hour after
-- its first instant) and at or before asOf, each a piece of its own (report_pieces.sql's shape),
-- read from the layers' report files, which are sorted by ts: a read opens only the row groups
-- of those hours. The layers hold each report once (layered-state.ts), so no rule is applied here.
-- Placeholders (a view's source: code constants, spliced): <files> the layers' report files;
-- <in_hours> a filter on ts built by code from the cut hours; <as_of> asOf as a TIMESTAMP
-- literal; <piece_columns> (piece-columns.ts).
-- Parameters: none.
-- Reads: <files>. Writes: nothing (a query: window_pieces.sql's columns).
SELECT streamId, sessionId, epoch_us(ts) AS start_us, epoch_us(ts) AS lo_us, {{piece_dimensions}}, {{piece_columns}}
FROM read_parquet({{files}}, hive_partitioning = false)
WHERE ({{in_hours}}) AND ts <= {{as_of}}
