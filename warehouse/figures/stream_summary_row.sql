-- A fragment (included by stream_summaries.sql and window_summaries_incremental.sql): the end of
-- a WITH list and the start of the select list of a stream's summary rows. Defines
-- `stream_activity` from `session_last` (a CTE the includer defines: each session's latest report
-- and latest final report, ts <= asOf): a session is active when its latest report is at most the
-- horizon old and is not final; a final report at the same time as its latest one ends it. Then
-- selects a summary row's columns from `sw` (the stream's window sums), `sc` (its session counts
-- and startup percentile) and `a` (stream_activity, LEFT JOINed by the includer); the includer
-- may add columns, then writes FROM.
-- Parameters: $as_of (TIMESTAMP), $horizon_seconds.
stream_activity AS (
  SELECT
    streamId,
    count(*) FILTER (WHERE last_ts >= $as_of - to_seconds($horizon_seconds)
                       AND (last_final_ts IS NULL OR last_final_ts < last_ts)) AS active_sessions
  FROM session_last
  GROUP BY streamId
)
SELECT
  sw.windowName,
  sw.streamId,
  sc.sessions AS totalSessions,
  {{window_delivery_figures}},
  CAST(coalesce(a.active_sessions, 0) AS BIGINT) AS activePeers,
  coalesce(a.active_sessions, 0) > 0 AS live,
  sw.last_ts AS lastSeenAt,
  -- Partial sums for adding streams up (platform-wide, per customer).
  CAST(sw.reports AS BIGINT) AS reports,
  {{window_quality_figures}},
  coalesce(sc.peer_mean_sum, 0) AS peerSessionMeanSum,
  sc.peer_sessions AS peerSessions,
  coalesce(sw.buf_sum, 0) AS bufferHealthSum,
  CAST(sw.buf_n AS BIGINT) AS bufferHealthReports
