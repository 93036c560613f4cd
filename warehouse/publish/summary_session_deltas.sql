-- A fragment of a WITH list (included by window_summaries_incremental.sql and
-- summary_base_compose.sql), the first of its WITH list: what a set of session-class rows
-- <fresh> changes in a summary base <base> of other rows <settled> (placeholders: relations the
-- includer fills in; the CTEs `fresh`, `settled`, `base` and `windows`, from $window_names): each session
-- the fresh rows touch, all of it (its fresh rows and its settled ones, found by its key), is added
-- (+1) and its settled part, which the base counted, taken back (-1). Defines:
-- `touched_sessions`: each touched session added up, all of it and its settled part apart;
-- `session_deltas`: each touched session in each window it is in, signed (windowName, streamId,
-- sign, peer_sum, peer_n, startup_ms);
-- `base_windows`: the base's window rows;
-- `session_counts`: each window's sessions, the sum of their mean peer counts and how many have
-- one, how many have a startup time (the base's, plus the deltas);
-- `band_counts`: the top of each window's startup times (the base's band, with the touched
-- sessions' values at or above its lower end added and taken back), each value with its count
-- (a negative count: the band lost a value it did not hold);
-- `session_last`: each session that the fresh rows touch (all of it) or that the base holds as late,
-- with its latest report and latest final report.
fresh AS (
  SELECT * FROM {{fresh}}
),
settled AS (
  SELECT * FROM {{settled}}
),
base AS (
  SELECT * FROM {{base}}
),
windows AS (
  SELECT unnest($window_names) AS windowName, generate_subscripts($window_names, 1) AS class
),
touched_keys AS (
  SELECT DISTINCT streamId, sessionId FROM fresh
),
settled_touched AS (
  SELECT streamId, sessionId, class, peer_sum, peer_n, startup_ms, last_ts, last_final_ts
  FROM settled SEMI JOIN touched_keys USING (streamId, sessionId)
),
-- Each touched session added up once, all of it (fresh and settled rows) and its settled part
-- apart, with the range of classes of each. Most sessions are of one class: the same sums are
-- theirs in every window from that class on. Only a session whose rows are of several classes (a
-- window's lower edge lies between its reports) is added up window by window, from its rows
-- (`split_rows`). One grouping by session, not one by window and session (up to 5× the rows).
touched_rows AS (
  SELECT streamId, sessionId, class, peer_sum, peer_n, startup_ms, last_ts, last_final_ts, false AS settled FROM fresh
  UNION ALL
  SELECT streamId, sessionId, class, peer_sum, peer_n, startup_ms, last_ts, last_final_ts, true FROM settled_touched
),
touched_sessions AS (
  SELECT
    streamId, sessionId,
    min(class) AS first_class, max(class) AS last_class,
    sum(peer_sum) AS peer_sum, sum(peer_n) AS peer_n, max(startup_ms) AS startup_ms,
    min(class) FILTER (WHERE settled) AS settled_first_class, max(class) FILTER (WHERE settled) AS settled_last_class,
    sum(peer_sum) FILTER (WHERE settled) AS settled_peer_sum, sum(peer_n) FILTER (WHERE settled) AS settled_peer_n,
    max(startup_ms) FILTER (WHERE settled) AS settled_startup_ms,
    max(last_ts) AS last_ts, max(last_final_ts) AS last_final_ts
  FROM touched_rows
  GROUP BY streamId, sessionId
),
-- The rows of the sessions of several classes (a settled part of several classes is a part of
-- such a session), and whether their settled part is of several classes too.
split_rows AS (
  SELECT r.*, coalesce(t.settled_first_class < t.settled_last_class, false) AS settled_split
  FROM touched_rows AS r
  JOIN touched_sessions AS t USING (streamId, sessionId)
  WHERE t.first_class < t.last_class
),
-- Each touched session in each window it is in: all of it (+1), and its settled part (-1).
session_deltas AS (
  SELECT w.windowName, t.streamId, 1 AS sign, t.peer_sum, t.peer_n, t.startup_ms
  FROM touched_sessions AS t
  JOIN windows AS w ON t.first_class <= w.class
  WHERE t.first_class = t.last_class
  UNION ALL
  SELECT w.windowName, t.streamId, -1, t.settled_peer_sum, t.settled_peer_n, t.settled_startup_ms
  FROM touched_sessions AS t
  JOIN windows AS w ON t.settled_first_class <= w.class
  WHERE t.settled_first_class = t.settled_last_class
  UNION ALL
  SELECT w.windowName, c.streamId, 1, sum(c.peer_sum), sum(c.peer_n), max(c.startup_ms)
  FROM split_rows AS c
  JOIN windows AS w ON c.class <= w.class
  GROUP BY w.windowName, c.streamId, c.sessionId
  UNION ALL
  SELECT w.windowName, c.streamId, -1, sum(c.peer_sum), sum(c.peer_n), max(c.startup_ms)
  FROM split_rows AS c
  JOIN windows AS w ON c.class <= w.class
  WHERE c.settled AND c.settled_split
  GROUP BY w.windowName, c.streamId, c.sessionId
),
base_windows AS (
  SELECT windowName, streamId, sessions, peer_mean_sum, peer_sessions, startup_n, band_min, band
  FROM base
  WHERE kind = 'window'
),
session_counts AS (
  SELECT
    windowName, streamId,
    CAST(sum(sessions) AS BIGINT) AS sessions, sum(peer_mean_sum) AS peer_mean_sum,
    CAST(sum(peer_sessions) AS BIGINT) AS peer_sessions, CAST(sum(startup_n) AS BIGINT) AS startup_n
  FROM (
    SELECT windowName, streamId, sessions, peer_mean_sum, peer_sessions, startup_n FROM base_windows
    UNION ALL
    SELECT
      windowName, streamId,
      sum(sign),
      sum(sign * {{session_peer_mean}}) FILTER (WHERE peer_n > 0),
      sum(sign) FILTER (WHERE peer_n > 0),
      sum(sign) FILTER (WHERE startup_ms IS NOT NULL)
    FROM session_deltas
    GROUP BY ALL
  )
  GROUP BY ALL
),
-- The top of each window's startup times: the base's band, with the touched sessions' values at
-- or above its lower end added (+1) and taken back (-1); a band that holds every value takes all.
band_values AS (
  SELECT windowName, streamId, unnest(band) AS v, 1 AS n FROM base_windows
  UNION ALL
  SELECT d.windowName, d.streamId, d.startup_ms, d.sign
  FROM session_deltas AS d
  LEFT JOIN base_windows AS b USING (windowName, streamId)
  WHERE d.startup_ms IS NOT NULL AND d.startup_ms >= coalesce(b.band_min, d.startup_ms)
),
band_counts AS (
  SELECT windowName, streamId, v, sum(n) AS n FROM band_values GROUP BY ALL HAVING sum(n) <> 0
),
session_last AS (
  SELECT streamId, sessionId, max(last_ts) AS last_ts, max(last_final_ts) AS last_final_ts
  FROM (
    SELECT streamId, sessionId, last_ts, last_final_ts FROM touched_sessions
    UNION ALL
    SELECT streamId, sessionId, last_ts, last_final_ts FROM base WHERE kind = 'late'
  )
  GROUP BY ALL
)
