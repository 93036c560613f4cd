-- The bucketed series of every stream, for any bucket size, from pieces of partial sums (single
-- reports, report_pieces.sql, or finer session buckets): each piece lies inside one minute (every
-- bucket size is a multiple of a minute), so a report falls in the bucket holding its ts. The
-- pieces are first summed per (stream, session, bucket) (session_buckets.sql), then per bucket
-- (series_of_buckets.sql).
-- Placeholders: <pieces> pieces (streamId, sessionId, start_us and the piece columns);
-- <series_piece_sums> (session_buckets.sql; filled by piece-columns.ts pieceSql).
-- Parameters: $bucket_seconds.
-- Reads: <pieces>. Writes: nothing (a query: series_of_buckets.sql's rows).
WITH session_buckets AS (
{{@session_buckets}}
)
{{@series_of_buckets}}
