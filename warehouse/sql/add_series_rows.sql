-- One standard size of a batch's series added to `series_rows` (created empty with the same
-- columns, from series_from_buckets.sql, by partition-state.ts).
-- Placeholders: <buckets> (series_from_buckets.sql). Parameters: $bucket_seconds.
-- Reads: <buckets>. Writes: series_rows (rows added).
INSERT INTO series_rows
{{@series_from_buckets}}
