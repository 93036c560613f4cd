-- A fragment of a WITH list (included by stream_summaries.sql and summary_base.sql): what a
-- window's figures need of each session, over the session-class rows `classed` (a CTE the includer
-- defines before it). Defines:
-- `windows` (windowName, class) from $window_names (VARCHAR[5], narrowest first, the last
-- unbounded);
-- `sessions`: each session's rows added up whatever their class, with the range of its classes;
-- `session_windows`: one row per session and window it has a report in (windowName, streamId,
-- peer_sum, peer_n, startup_ms).
windows AS (
  SELECT unnest($window_names) AS windowName, generate_subscripts($window_names, 1) AS class
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
)
