-- The bucketed series of every stream from `session_buckets`: one row per (stream, session,
-- bucket of $bucket_seconds) with its partial sums (session_buckets.sql), start_us the bucket's
-- start. A bucket's figures follow the window definitions over its reports (docs/metrics.md;
-- sessions = distinct sessions that reported in the bucket). Buckets are aligned to multiples of
-- $bucket_seconds since the Unix epoch (UTC).
-- Averages sum exact DECIMALs (see stream_summaries.sql), so the figures are the same to the
-- last digit whether they come from reports or from states. Only non-empty buckets are
-- returned, in no order; readers order them and fill the gaps with zeros (docs/api.md).
-- Placeholders: <series_delivery_figures> (piece-columns.ts). Parameters: $bucket_seconds.
-- Reads: session_buckets (a CTE of the including statement). Writes: nothing (a query: one row
-- per stream and non-empty bucket, the columns of a snapshot's series files).
SELECT
  CAST($bucket_seconds AS INTEGER) AS bucketSeconds,
  streamId,
  make_timestamp(start_us) AS bucketStart,
  count(*) AS sessions,
  {{series_delivery_figures}},
  CAST(sum(stalls) AS BIGINT) AS rebufferEvents,
  CAST(sum(reports) AS BIGINT) AS reports
FROM session_buckets
GROUP BY streamId, start_us
