-- The bucketed series of every stream in `reports`, for any bucket size: buckets aligned to
-- multiples of $bucket_seconds since the Unix epoch (UTC); a report falls in the bucket holding
-- its ts, and a bucket's figures follow the window definitions over its reports
-- (session-report.md; sessions = distinct sessions that reported in the bucket).
-- Averages sum exact DECIMALs (see stream_summaries.sql). Only non-empty buckets are returned,
-- in no order; readers order them and fill the gaps with zeros (api-decisions.md).
-- Parameter: $bucket_seconds (60–86400 in the API; any positive size works).
WITH session_buckets AS (
  SELECT
    streamId,
    sessionId,
    epoch_us(ts) // (CAST($bucket_seconds AS BIGINT) * 1000000) AS bucket,
    count(*) AS reports,
    sum(bytesOffloaded) AS off,
    sum(bytesFallback) AS fb,
    sum(peerCount) AS peer_sum,
    count(peerCount) AS peer_n,
    sum(CAST(bufferHealth AS DECIMAL(38, 9))) AS buf_sum,
    count(bufferHealth) AS buf_n,
    sum(stallCount) AS stalls
  FROM reports
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
