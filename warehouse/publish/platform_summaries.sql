-- Platform-wide rows (customer NULL), one per window, and per-customer rows, added up from stream
-- summaries (any set of customer partitions): the same definitions, since sessions belong to one
-- stream each and the peer and buffer averages are carried as sums and counts. Platform rows exist
-- for every window, with zeros where nothing reported; customer rows only where it reported.
-- <summaries>: a relation of stream summary rows with a `customer` column.
-- Parameter: $window_names (VARCHAR[]).
WITH windows AS (
  SELECT unnest($window_names) AS windowName, generate_subscripts($window_names, 1) AS class
),
rows AS (
  SELECT
    w.windowName,
    any_value(w.class) AS class,
    CASE WHEN GROUPING(s.customer) = 1 THEN NULL ELSE s.customer END AS customer,
    GROUPING(s.customer) = 0 AS per_customer,
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
  GROUP BY GROUPING SETS ((w.windowName), (w.windowName, s.customer))
)
SELECT * EXCLUDE (class, per_customer)
FROM rows
-- A window with no stream at all gives a customer row of NULL in the per-customer set: not a customer.
WHERE NOT (per_customer AND customer IS NULL)
ORDER BY customer NULLS FIRST, class
