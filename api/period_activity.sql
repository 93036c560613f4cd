-- What a period's end looks like in `reports` (deduplicated, ts <= $as_of): the streams with a
-- report in the period (ts > $as_of - $period_seconds) and the active sessions at $as_of, with
-- the stream summaries' definition (stream_summaries.sql: the latest report at most the horizon
-- old and not final; a final report at the same time as the latest one ends the session).
-- Parameters: $as_of (TIMESTAMP), $period_seconds (BIGINT), $horizon_seconds (BIGINT).
-- Reads: reports. Writes: nothing (a query: one row, streams and activePeers).
WITH sessions AS (
  SELECT streamId, sessionId, max(ts) AS last_ts, max(ts) FILTER (WHERE final) AS last_final_ts
  FROM reports
  GROUP BY streamId, sessionId
)
SELECT
  CAST((SELECT count(DISTINCT streamId) FROM reports WHERE ts > $as_of - to_seconds($period_seconds)) AS BIGINT) AS streams,
  CAST(count(*) FILTER (WHERE last_ts >= $as_of - to_seconds($horizon_seconds)
                          AND (last_final_ts IS NULL OR last_final_ts < last_ts)) AS BIGINT) AS activePeers
FROM sessions
