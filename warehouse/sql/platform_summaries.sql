-- Platform-wide rows, one per window, added up from stream summaries (any set of customer
-- partitions): the same definitions, since sessions belong to one stream each and the peer and
-- buffer averages are carried as sums and counts. Windows with no report give zeros.
-- <summaries>: a relation of stream summary rows. Parameter: $window_names (VARCHAR[]).
WITH windows AS (
  SELECT unnest($window_names) AS windowName, generate_subscripts($window_names, 1) AS class
)
SELECT
  w.windowName,
  count(s.streamId) AS streams,
  CAST(coalesce(sum(s.totalSessions), 0) AS BIGINT) AS totalSessions,
  CAST(coalesce(sum(s.totalBytesOffloaded), 0) AS BIGINT) AS totalBytesOffloaded,
  CAST(coalesce(sum(s.totalBytesFallback), 0) AS BIGINT) AS totalBytesFallback,
  CASE WHEN coalesce(sum(s.totalBytesOffloaded) + sum(s.totalBytesFallback), 0) > 0
       THEN sum(s.totalBytesOffloaded) / (sum(s.totalBytesOffloaded) + sum(s.totalBytesFallback))
       ELSE 0.0 END AS avgOffloadRatio,
  coalesce(CAST(sum(s.peerSessionMeanSum) AS DOUBLE) / nullif(sum(s.peerSessions), 0), 0.0) AS avgPeerCount,
  coalesce(CAST(sum(s.bufferHealthSum) AS DOUBLE) / nullif(sum(s.bufferHealthReports), 0), 0.0) AS avgBufferHealth,
  CAST(coalesce(sum(s.activePeers), 0) AS BIGINT) AS activePeers,
  coalesce(sum(s.activePeers), 0) > 0 AS live,
  max(s.lastSeenAt) AS lastSeenAt,
  CAST(coalesce(sum(s.reports), 0) AS BIGINT) AS reports,
  CAST(coalesce(sum(s.rebufferEvents), 0) AS BIGINT) AS rebufferEvents
FROM windows AS w
LEFT JOIN {{summaries}} AS s ON s.windowName = w.windowName
GROUP BY w.windowName, w.class
ORDER BY w.class
