-- A batch's session buckets of $bucket_seconds, from those of the next finer standard size (each
-- standard size divides the next, so each size groups the rows of the one before it, not every
-- minute again): session_buckets.sql kept as a table for the next size.
-- Placeholders: <buckets> the table it creates (session_buckets_<size>); <pieces> the finer
-- buckets (state_minutes or session_buckets_<finer size>); <series_piece_sums> (piece-columns.ts).
-- Parameters: $bucket_seconds.
-- Reads: <pieces>. Writes: <buckets>.
CREATE OR REPLACE TEMP TABLE {{buckets}} AS
{{@session_buckets}}
