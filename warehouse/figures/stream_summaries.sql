-- Stream summaries for every window (docs/metrics.md, "Definitions"): a report counts in a
-- window when asOf - window < ts <= asOf.
-- <classed>: partial sums per stream and session with their window class (window_class.sql: 1
-- for 1h … 5 for all), none of which straddles asOf or a window's lower edge, and none after
-- asOf: a snapshot's session classes (session_classes.sql), one row per (stream, session, class).
-- Windows nest, so a window's figures add up the partial sums of its class and the narrower ones.
-- The sums that need no session are added up per stream; those that do are added up per session
-- once (`sessions`), then per window only for the few sessions whose rows are of several classes.
-- Besides the summary fields, each row carries the quality figures (rebufferEvents, rebufferRatio,
-- startupTimeP95Ms, p2pConnectionSuccess: breakdown_rows.sql's definitions, piece-columns.ts) and
-- the partial sums that let platform-wide and per-customer rows be added up from stream rows
-- (peer/buffer sums and counts).
-- DuckDB sums integers into HUGEINT; figures are cast back to BIGINT, which Parquet stores exactly.
-- Averages sum exact DECIMALs, not DOUBLEs: a parallel DOUBLE sum depends on the order threads
-- finish in, and the same input must always give the same figures, to the last digit, whether
-- they come from reports or from partition states.
-- Placeholders: <classed> (above); <stream_piece_sums> the piece columns a window adds up per
-- stream, combined (piece-columns.ts: the others need the session, below); <startup_p95>,
-- <peer_mean_sum>, <window_delivery_figures>, <window_quality_figures> (piece-columns.ts).
-- Parameters: $as_of (TIMESTAMP), $window_names (VARCHAR[5], narrowest first, the last unbounded),
-- $horizon_seconds.
-- Reads: <classed>. Writes: nothing (a query: one row per window and stream).
WITH
classed AS (
  SELECT * FROM {{classed}}
),
-- What adds up over pieces (bytes, reports, buffer health, stalls, the latest report) is summed
-- per stream and class, then per window over its class and the narrower ones: no session needed.
stream_parts AS (
  SELECT
    streamId, class,
    {{stream_piece_sums}}
  FROM classed
  GROUP BY ALL
),
windows AS (
  SELECT unnest($window_names) AS windowName, generate_subscripts($window_names, 1) AS class
),
stream_windows AS (
  SELECT
    w.windowName, p.streamId,
    {{stream_piece_sums}}
  FROM stream_parts AS p
  JOIN windows AS w ON p.class <= w.class
  GROUP BY ALL
),
-- What needs the session (counting sessions, the mean over sessions of each session's mean
-- peerCount, the startup-time percentile, activity): one row per session and window, with the
-- session's peerCount sums and startup time in that window (its pieces of the window's class and
-- the narrower ones).
-- Almost every session has one row of classes (one class unit, one class): those are passed
-- through as they are, and only the sessions with several rows are grouped. They are found by a
-- hash of the key (grouping 64-bit integers costs a fraction of grouping the strings); a session
-- whose hash another one shares is grouped too, which changes nothing, so a collision costs no
-- figure. `sessions` adds up each session's rows whatever their class, with the range of its
-- classes: a session of one class (most of those with several rows too: its part of one class
-- split over class units) has the same sums in every window from its class on; only the few whose
-- rows are of several classes (a window's lower edge lies between their reports) are added up
-- window by window, from their rows, found by their key.
multi_keys AS (
  SELECT hash(streamId, sessionId) AS h FROM classed GROUP BY h HAVING count(*) > 1
),
sessions AS (
  SELECT
    streamId, sessionId,
    min(class) AS first_class, max(class) AS last_class,
    sum(peer_sum) AS peer_sum, sum(peer_n) AS peer_n, max(startup_ms) AS startup_ms,
    max(last_ts) AS last_ts, max(last_final_ts) AS last_final_ts
  FROM classed AS c SEMI JOIN multi_keys AS m ON hash(c.streamId, c.sessionId) = m.h
  GROUP BY streamId, sessionId
  UNION ALL
  SELECT streamId, sessionId, class, class, peer_sum, peer_n, startup_ms, last_ts, last_final_ts
  FROM classed AS c ANTI JOIN multi_keys AS m ON hash(c.streamId, c.sessionId) = m.h
),
split_sessions AS (
  SELECT streamId, sessionId FROM sessions WHERE first_class < last_class
),
session_windows AS (
  SELECT w.windowName, s.streamId, s.peer_sum, s.peer_n, s.startup_ms
  FROM sessions AS s
  JOIN windows AS w ON s.first_class <= w.class
  WHERE s.first_class = s.last_class
  UNION ALL
  SELECT w.windowName, c.streamId, sum(c.peer_sum), sum(c.peer_n), max(c.startup_ms)
  FROM classed AS c SEMI JOIN split_sessions AS k USING (streamId, sessionId)
  JOIN windows AS w ON c.class <= w.class
  GROUP BY w.windowName, c.streamId, c.sessionId
),
session_counts AS (
  SELECT
    windowName, streamId,
    count(*) AS sessions,
    {{peer_mean_sum}} AS peer_mean_sum,
    count(*) FILTER (WHERE peer_n > 0) AS peer_sessions,
    {{startup_p95}} AS startup_p95
  FROM session_windows
  GROUP BY ALL
),
-- A session is active when its latest report (ts <= asOf) is at most the horizon old and is
-- not final; a final report at the same time as its latest one ends it.
stream_activity AS (
  SELECT
    streamId,
    count(*) FILTER (WHERE last_ts >= $as_of - to_seconds($horizon_seconds)
                       AND (last_final_ts IS NULL OR last_final_ts < last_ts)) AS active_sessions
  FROM sessions
  GROUP BY streamId
)
SELECT
  sw.windowName,
  sw.streamId,
  sc.sessions AS totalSessions,
  {{window_delivery_figures}},
  CAST(a.active_sessions AS BIGINT) AS activePeers,
  a.active_sessions > 0 AS live,
  sw.last_ts AS lastSeenAt,
  -- Partial sums for adding streams up (platform-wide, per customer).
  CAST(sw.reports AS BIGINT) AS reports,
  {{window_quality_figures}},
  coalesce(sc.peer_mean_sum, 0) AS peerSessionMeanSum,
  sc.peer_sessions AS peerSessions,
  coalesce(sw.buf_sum, 0) AS bufferHealthSum,
  CAST(sw.buf_n AS BIGINT) AS bufferHealthReports
FROM stream_windows AS sw
JOIN session_counts AS sc USING (windowName, streamId)
JOIN stream_activity AS a USING (streamId)
ORDER BY sw.windowName, sw.streamId
