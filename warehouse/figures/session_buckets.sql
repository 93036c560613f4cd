-- Pieces of partial sums summed per (stream, session, bucket of $bucket_seconds), start_us then
-- the bucket's start: what series_of_buckets.sql makes a series of. A partition state makes the
-- series of every standard size from the buckets of the next finer size (each standard size
-- divides the next), so each size groups the rows of the one before it, not every minute again.
-- Exact: integer and DECIMAL sums, at the pieces' own types.
-- Placeholders: <pieces> the finer pieces (streamId, sessionId, start_us and at least the
-- columns a series needs); <series_piece_sums> those columns combined (piece-columns.ts).
-- Parameters: $bucket_seconds.
-- Reads: <pieces>. Writes: nothing (a query: streamId, sessionId, start_us, then the series'
-- piece columns).
SELECT
  streamId,
  sessionId,
  start_us // (CAST($bucket_seconds AS BIGINT) * 1000000) * (CAST($bucket_seconds AS BIGINT) * 1000000) AS start_us,
  {{series_piece_sums}}
FROM {{pieces}}
GROUP BY ALL
