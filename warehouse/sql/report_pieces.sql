-- Each deduplicated report of <source> as a piece of partial sums (the shape that partition
-- states store per minute and per hour), so that series and summaries over reports and over
-- states run one and the same SQL. lo_us: the report's ts in microseconds since the epoch.
SELECT
  streamId,
  sessionId,
  epoch_us(ts) AS start_us,
  epoch_us(ts) AS lo_us,
  CAST(1 AS BIGINT) AS reports,
  CAST(bytesOffloaded AS BIGINT) AS off,
  CAST(bytesFallback AS BIGINT) AS fb,
  CAST(peerCount AS BIGINT) AS peer_sum,
  CAST(peerCount IS NOT NULL AS BIGINT) AS peer_n,
  CAST(bufferHealth AS DECIMAL(38, 9)) AS buf_sum,
  CAST(bufferHealth IS NOT NULL AS BIGINT) AS buf_n,
  CAST(stallCount AS BIGINT) AS stalls,
  ts AS last_ts,
  CASE WHEN final THEN ts END AS last_final_ts
FROM {{source}}
