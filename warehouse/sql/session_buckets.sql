-- Pieces of partial sums (streamId, sessionId, start_us, reports, off, fb, peer_sum, peer_n,
-- buf_sum, buf_n, stalls) summed per (stream, session, bucket of $bucket_seconds), start_us then
-- the bucket's start: what series_of_buckets.sql makes a series of. A partition state makes the
-- series of every standard size from the buckets of the next finer size (each standard size
-- divides the next), so each size groups the rows of the one before it, not every minute again.
-- Exact: integer and DECIMAL sums. <pieces>: the finer pieces.
SELECT
  streamId,
  sessionId,
  start_us // (CAST($bucket_seconds AS BIGINT) * 1000000) * (CAST($bucket_seconds AS BIGINT) * 1000000) AS start_us,
  CAST(sum(reports) AS BIGINT) AS reports,
  CAST(sum(off) AS BIGINT) AS off,
  CAST(sum(fb) AS BIGINT) AS fb,
  CAST(sum(peer_sum) AS BIGINT) AS peer_sum,
  CAST(sum(peer_n) AS BIGINT) AS peer_n,
  sum(buf_sum) AS buf_sum,
  CAST(sum(buf_n) AS BIGINT) AS buf_n,
  CAST(sum(stalls) AS BIGINT) AS stalls
FROM {{pieces}}
GROUP BY ALL
