-- The pieces of the hours that window edges cut, from the states' edge-hour files
-- (edge_hour_pieces.sql): every report of such an hour up to asOf, each a piece of its own.
-- Placeholders (a view's source: code constants, spliced): <files> the edge-hour files; <as_of_us>
-- asOf in microseconds since the epoch, a BIGINT literal; <piece_dimensions>, <piece_columns>
-- (piece-columns.ts).
-- Parameters: none.
-- Reads: <files>. Writes: nothing (a query: window_pieces.sql's columns).
SELECT streamId, sessionId, start_us, lo_us, {{piece_dimensions}}, {{piece_columns}}
FROM read_parquet({{files}})
WHERE lo_us <= {{as_of_us}}
