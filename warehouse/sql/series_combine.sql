-- The bucketed series of every stream, for any bucket size, from pieces of partial sums (single
-- reports, report_pieces.sql, or the minutes of a partition state): buckets aligned to multiples
-- of $bucket_seconds since the Unix epoch (UTC); a report falls in the bucket holding its ts
-- (a piece lies inside one minute, and every bucket size is a multiple of a minute), and a
-- bucket's figures follow the window definitions over its reports (session-report.md;
-- sessions = distinct sessions that reported in the bucket).
-- Averages sum exact DECIMALs (see stream_summaries.sql), so the figures are the same to the
-- last digit whether they come from reports or from states. Only non-empty buckets are
-- returned, in no order; readers order them and fill the gaps with zeros (api-decisions.md).
-- <pieces>: streamId, sessionId, start_us and the partial sums. Parameter: $bucket_seconds.
WITH session_buckets AS (
  SELECT
    streamId,
    sessionId,
    start_us // (CAST($bucket_seconds AS BIGINT) * 1000000) AS bucket,
    sum(reports) AS reports,
    sum(off) AS off,
    sum(fb) AS fb,
    sum(peer_sum) AS peer_sum,
    sum(peer_n) AS peer_n,
    sum(buf_sum) AS buf_sum,
    sum(buf_n) AS buf_n,
    sum(stalls) AS stalls
  FROM {{pieces}}
  GROUP BY ALL
)
SELECT
  CAST($bucket_seconds AS INTEGER) AS bucketSeconds,
  streamId,
  make_timestamp(bucket * CAST($bucket_seconds AS BIGINT) * 1000000) AS bucketStart,
  count(*) AS sessions,
  CAST(sum(off) AS BIGINT) AS bytesOffloaded,
  CAST(sum(fb) AS BIGINT) AS bytesFallback,
  CASE WHEN sum(off) + sum(fb) > 0 THEN sum(off) / (sum(off) + sum(fb)) ELSE 0.0 END AS offloadRatio,
  coalesce(CAST(sum(CAST(peer_sum / peer_n AS DECIMAL(38, 12))) FILTER (WHERE peer_n > 0) AS DOUBLE)
           / nullif(count(*) FILTER (WHERE peer_n > 0), 0), 0.0) AS avgPeerCount,
  coalesce(CAST(sum(buf_sum) AS DOUBLE) / nullif(sum(buf_n), 0), 0.0) AS avgBufferHealth,
  CAST(sum(stalls) AS BIGINT) AS rebufferEvents,
  CAST(sum(reports) AS BIGINT) AS reports
FROM session_buckets
GROUP BY streamId, bucket
