-- The quality figures of each bucket of every stream's series (docs/metrics.md: a bucket's
-- figures are the window's over the reports in it): the watch and stall time, the rebuffer ratio
-- of their sums, the rebuffer events, the P2P connection success, and the startup-time p95 over
-- the sessions that have one in the bucket (a session's startupMs is on its seq = 0 report, so it
-- counts in that report's bucket). An exact percentile of each bucket's own sessions, never
-- a combination of other buckets' percentiles. The figures come from the one list of quality
-- figures that breakdowns and summaries use (piece-columns.ts).
-- Placeholders: <pieces> report pieces (report_pieces.sql: streamId, sessionId, start_us and the
-- piece columns); <series_quality_figures> (piece-columns.ts).
-- Parameters: $bucket_seconds.
-- Reads: <pieces>. Writes: nothing (a query: one row per stream and non-empty bucket, in no order).
WITH session_buckets AS (
  SELECT
    streamId,
    sessionId,
    start_us // (CAST($bucket_seconds AS BIGINT) * 1000000) * (CAST($bucket_seconds AS BIGINT) * 1000000) AS start_us,
    sum(stalls) AS stalls,
    sum(stall_ms) AS stall_ms,
    sum(watch_ms) AS watch_ms,
    sum(p2p_att) AS p2p_att,
    sum(p2p_ok) AS p2p_ok,
    max(startup_ms) AS startup_ms
  FROM {{pieces}}
  GROUP BY ALL
)
SELECT
  streamId,
  make_timestamp(start_us) AS bucketStart,
  CAST(coalesce(sum(watch_ms), 0) AS BIGINT) AS watchMs,
  CAST(coalesce(sum(stall_ms), 0) AS BIGINT) AS stallMs,
  {{series_quality_figures}}
FROM session_buckets
GROUP BY streamId, start_us
