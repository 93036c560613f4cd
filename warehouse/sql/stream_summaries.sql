-- Stream summaries for every window (session-report.md, "Definitions"): a report counts in a
-- window when asOf - window < ts <= asOf.
-- <pieces>: partial sums per stream and session (report_pieces.sql, or partition-state pieces),
-- none of which straddles asOf or a window's lower edge, and none after asOf; lo_us is the
-- earliest instant a piece covers (microseconds since the epoch). Windows nest, so each piece is
-- classed once by the narrowest window that holds it and a window's figures add up the partial
-- sums of its class and the narrower ones.
-- Parameters: $as_of (TIMESTAMP), $window_names (VARCHAR[5], narrowest first, the last unbounded),
-- $window_seconds (BIGINT[4], lengths of the four bounded windows), $horizon_seconds.
-- Besides the summary fields, each row carries the partial sums that let platform-wide and
-- per-customer rows be added up from stream rows (peer/buffer sums and counts).
-- DuckDB sums integers into HUGEINT; figures are cast back to BIGINT, which Parquet stores exactly.
-- Averages sum exact DECIMALs, not DOUBLEs: a parallel DOUBLE sum depends on the order threads
-- finish in, and the same input must always give the same figures, to the last digit, whether
-- they come from reports or from partition states.
WITH
classed AS (
  SELECT
    *,
    CASE
      WHEN lo_us > epoch_us($as_of) - $window_seconds[1] * 1000000 THEN 1
      WHEN lo_us > epoch_us($as_of) - $window_seconds[2] * 1000000 THEN 2
      WHEN lo_us > epoch_us($as_of) - $window_seconds[3] * 1000000 THEN 3
      WHEN lo_us > epoch_us($as_of) - $window_seconds[4] * 1000000 THEN 4
      ELSE 5
    END AS class
  FROM {{pieces}}
),
session_parts AS (
  SELECT
    streamId, sessionId, class,
    sum(reports) AS reports,
    sum(off) AS off,
    sum(fb) AS fb,
    sum(peer_sum) AS peer_sum,
    sum(peer_n) AS peer_n,
    sum(buf_sum) AS buf_sum,
    sum(buf_n) AS buf_n,
    sum(stalls) AS stalls,
    max(last_ts) AS last_ts,
    max(last_final_ts) AS last_final_ts
  FROM classed
  GROUP BY ALL
),
windows AS (
  SELECT unnest($window_names) AS windowName, generate_subscripts($window_names, 1) AS class
),
session_windows AS (
  SELECT
    w.windowName, p.streamId, p.sessionId,
    sum(p.reports) AS reports,
    sum(p.off) AS off,
    sum(p.fb) AS fb,
    sum(p.peer_sum) AS peer_sum,
    sum(p.peer_n) AS peer_n,
    sum(p.buf_sum) AS buf_sum,
    sum(p.buf_n) AS buf_n,
    sum(p.stalls) AS stalls,
    max(p.last_ts) AS last_ts
  FROM session_parts AS p
  JOIN windows AS w ON p.class <= w.class
  GROUP BY ALL
),
-- A session is active when its latest report (ts <= asOf) is at most the horizon old and is
-- not final; a final report at the same time as its latest one ends it.
session_activity AS (
  SELECT streamId, sessionId, max(last_ts) AS last_ts, max(last_final_ts) AS last_final_ts
  FROM session_parts
  GROUP BY ALL
),
stream_activity AS (
  SELECT
    streamId,
    count(*) FILTER (WHERE last_ts >= $as_of - to_seconds($horizon_seconds)
                       AND (last_final_ts IS NULL OR last_final_ts < last_ts)) AS active_sessions
  FROM session_activity
  GROUP BY streamId
)
SELECT
  sw.windowName,
  sw.streamId,
  count(*) AS totalSessions,
  CAST(sum(sw.off) AS BIGINT) AS totalBytesOffloaded,
  CAST(sum(sw.fb) AS BIGINT) AS totalBytesFallback,
  CASE WHEN sum(sw.off) + sum(sw.fb) > 0
       THEN sum(sw.off) / (sum(sw.off) + sum(sw.fb)) ELSE 0.0 END AS avgOffloadRatio,
  coalesce(CAST(sum(CAST(sw.peer_sum / sw.peer_n AS DECIMAL(38, 12))) FILTER (WHERE sw.peer_n > 0) AS DOUBLE)
           / nullif(count(*) FILTER (WHERE sw.peer_n > 0), 0), 0.0) AS avgPeerCount,
  coalesce(CAST(sum(sw.buf_sum) AS DOUBLE) / nullif(sum(sw.buf_n), 0), 0.0) AS avgBufferHealth,
  CAST(any_value(a.active_sessions) AS BIGINT) AS activePeers,
  any_value(a.active_sessions) > 0 AS live,
  max(sw.last_ts) AS lastSeenAt,
  -- Partial sums for adding streams up (platform-wide, per customer).
  CAST(sum(sw.reports) AS BIGINT) AS reports,
  CAST(sum(sw.stalls) AS BIGINT) AS rebufferEvents,
  coalesce(sum(CAST(sw.peer_sum / sw.peer_n AS DECIMAL(38, 12))) FILTER (WHERE sw.peer_n > 0), 0) AS peerSessionMeanSum,
  count(*) FILTER (WHERE sw.peer_n > 0) AS peerSessions,
  coalesce(sum(sw.buf_sum), 0) AS bufferHealthSum,
  CAST(sum(sw.buf_n) AS BIGINT) AS bufferHealthReports
FROM session_windows AS sw
JOIN stream_activity AS a USING (streamId)
GROUP BY sw.windowName, sw.streamId
ORDER BY sw.windowName, sw.streamId
