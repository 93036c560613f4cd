-- A batch's session buckets of $bucket_seconds (the first standard size past 60 s), from the
-- minute pieces: kept as a table, so that the minute pieces, the largest relation of a build, go
-- before the larger sizes are made from these buckets (series_rows.sql; each standard size
-- divides the next, so each size groups the rows of the one before it, not every minute again).
-- Placeholders: <buckets> the table it creates (session_buckets_<size>); <pieces> the minute
-- pieces (state_minutes); <series_piece_sums> (piece-columns.ts). Parameters: $bucket_seconds.
-- Reads: <pieces>. Writes: <buckets>.
CREATE OR REPLACE TEMP TABLE {{buckets}} AS
{{@session_buckets}}
