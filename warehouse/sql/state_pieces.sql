-- A partition state's pieces, from the deduplicated `reports` of one batch of partitions: per
-- (date, stream, session, minute) in `state_minutes` and per (date, stream, session, hour) in
-- `state_hours`, the partial sums of every figure (session-report.md) and the session's latest
-- report times.
-- A piece covers either the instant that starts its minute/hour (at_start) or the open interval
-- after it, so that any window (asOf - w, asOf] whose edges fall on minute boundaries is an exact
-- union of pieces, and buckets [start, start + size) are too.
-- Integer sums are cast to BIGINT (Parquet keeps them exactly; HUGEINT would become DOUBLE).
CREATE OR REPLACE TEMP TABLE state_minutes AS
SELECT
  CAST(ts AS DATE) AS date,
  streamId,
  sessionId,
  epoch_us(ts) // 60000000 * 60000000 AS start_us,
  epoch_us(ts) % 60000000 = 0 AS at_start,
  count(*) AS reports,
  CAST(sum(bytesOffloaded) AS BIGINT) AS off,
  CAST(sum(bytesFallback) AS BIGINT) AS fb,
  CAST(sum(peerCount) AS BIGINT) AS peer_sum,
  count(peerCount) AS peer_n,
  sum(CAST(bufferHealth AS DECIMAL(38, 9))) AS buf_sum,
  count(bufferHealth) AS buf_n,
  CAST(sum(stallCount) AS BIGINT) AS stalls,
  max(ts) AS last_ts,
  max(ts) FILTER (WHERE final) AS last_final_ts
FROM reports
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE state_hours AS
SELECT date, 3600 AS grain, hour_us AS start_us, hour_start AS at_start, streamId, sessionId,
       CAST(sum(reports) AS BIGINT) AS reports, CAST(sum(off) AS BIGINT) AS off, CAST(sum(fb) AS BIGINT) AS fb,
       CAST(sum(peer_sum) AS BIGINT) AS peer_sum, CAST(sum(peer_n) AS BIGINT) AS peer_n, sum(buf_sum) AS buf_sum,
       CAST(sum(buf_n) AS BIGINT) AS buf_n,
       CAST(sum(stalls) AS BIGINT) AS stalls, max(last_ts) AS last_ts, max(last_final_ts) AS last_final_ts
FROM (
  SELECT *, start_us // 3600000000 * 3600000000 AS hour_us, at_start AND start_us % 3600000000 = 0 AS hour_start
  FROM state_minutes
)
GROUP BY date, hour_us, hour_start, streamId, sessionId;
