-- One standard size of the series of the days computed from their reports (series_combine.sql
-- over partial_pieces), added to `partial_series` (created empty with the same columns by
-- series-days.ts).
-- Placeholders: <pieces> partial_pieces; <series_piece_sums> (piece-columns.ts).
-- Parameters: $bucket_seconds.
-- Reads: partial_pieces (partial_pieces.sql). Writes: partial_series (rows added).
INSERT INTO partial_series
{{@series_combine}}
