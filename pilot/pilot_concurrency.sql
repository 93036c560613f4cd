-- Concurrency of a pilot report, for every stream: the one-minute series of the shared series SQL
-- (series_combine.sql over the deduplicated reports; `sessions` of a bucket is its distinct
-- sessions) reduced to what the report shows, so that 30 days of minutes (43,200 rows a stream)
-- are not read into JavaScript: the peak (its sessions, and the earliest minute that has them), Σ
-- sessions over the minutes and the number of minutes from the first non-empty one to the last
-- (empty minutes between them count as 0 sessions: the average concurrency is Σ / minutes).
-- Placeholders: <series> the one-minute series (bucket-series.ts bucketSeriesSql).
-- Parameters: $bucket_seconds (60).
-- Reads: <series>. Writes: nothing (a query: one row per stream).
WITH minutes AS (
  SELECT streamId, bucketStart, sessions, max(sessions) OVER (PARTITION BY streamId) AS peak
  FROM ({{series}})
)
SELECT
  streamId,
  CAST(any_value(peak) AS BIGINT) AS peakSessions,
  epoch_ms(min(bucketStart) FILTER (WHERE sessions = peak)) AS peakStartMs,
  CAST(sum(sessions) AS BIGINT) AS sessionMinutes,
  CAST((epoch_ms(max(bucketStart)) - epoch_ms(min(bucketStart))) // ($bucket_seconds * 1000) + 1 AS BIGINT) AS minutes
FROM minutes
GROUP BY streamId
ORDER BY streamId
