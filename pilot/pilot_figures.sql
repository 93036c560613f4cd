-- Pilot report figures of every stream in `reports` (deduplicated, every column), for each
-- cohort and for the whole stream (cohort = 'all'), following docs/metrics.md's definitions.
-- A report without a cohort counts as peer-assisted ('p2p'), the deployment's default.
-- Session-level values first: a session's mean peer count, its startup time (set on its first
-- report), its viewer (null when unknown: the session then counts as its own viewer).
-- Only startupP95Ms and p2pConnectionSuccess may be null; Σ intervalMs (not a counter) is 0 when
-- no report has one.
-- A session's sums of the series figures are its piece (piece-columns.ts), as states keep them.
-- Placeholders: <series_piece_of_reports>, <series_delivery_figures> (piece-columns.ts). Parameters: none.
-- Reads: reports. Writes: nothing (a query: one row per stream and cohort, and per stream).
WITH r AS (
  SELECT *, coalesce(cohort, 'p2p') AS c FROM reports
),
s AS (
  SELECT
    streamId, c AS cohort, sessionId,
    max(viewerId) AS viewer_id,
    {{series_piece_of_reports}},
    sum(stallMs) AS stall_ms,
    sum(watchMs) AS watch_ms,
    max(startupMs) AS startup_ms,
    sum(p2pConnAttempts) AS attempts,
    sum(p2pConnSuccesses) AS successes,
    sum(signalingErrors) AS signaling_errors,
    sum(validationFailures) AS validation_failures,
    sum(busyPeerEvents) AS busy_peer_events,
    sum(intervalMs) AS interval_ms,
    min(ts) AS first_ts,
    max(ts) AS last_ts
  FROM r
  GROUP BY ALL
)
SELECT
  streamId,
  CASE WHEN GROUPING(cohort) = 1 THEN 'all' ELSE cohort END AS cohort,
  count(*) AS sessions,
  CAST(sum(reports) AS BIGINT) AS reports,
  count(DISTINCT viewer_id) + count(*) FILTER (WHERE viewer_id IS NULL) AS viewers,
  count(*) FILTER (WHERE viewer_id IS NULL) AS sessionsWithoutViewer,
  {{series_delivery_figures}},
  CAST(sum(stalls) AS BIGINT) AS rebufferEvents,
  CAST(sum(stall_ms) AS BIGINT) AS stallMs,
  CAST(sum(watch_ms) AS BIGINT) AS watchMs,
  coalesce(sum(stall_ms) / nullif(sum(watch_ms) + sum(stall_ms), 0), 0.0) AS rebufferRatio,
  quantile_cont(startup_ms, 0.95) AS startupP95Ms,
  count(startup_ms) AS startupSamples,
  CAST(sum(attempts) AS BIGINT) AS p2pConnAttempts,
  CAST(sum(successes) AS BIGINT) AS p2pConnSuccesses,
  sum(successes) / nullif(sum(attempts), 0) AS p2pConnectionSuccess,
  CAST(sum(signaling_errors) AS BIGINT) AS signalingErrors,
  CAST(sum(validation_failures) AS BIGINT) AS validationFailures,
  CAST(sum(busy_peer_events) AS BIGINT) AS busyPeerEvents,
  coalesce(CAST(sum(interval_ms) AS BIGINT), 0) AS intervalMs,
  min(first_ts) AS firstReportAt,
  max(last_ts) AS lastReportAt
FROM s
GROUP BY GROUPING SETS ((streamId, cohort), (streamId))
ORDER BY streamId, cohort
