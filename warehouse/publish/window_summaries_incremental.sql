-- The stream summaries of every window at asOf (the rows of window_summaries.sql) of a run of
-- streams of customers with a summary base (summary_base.sql: what their settled classes give),
-- from that base and the snapshot's other classes (`fresh`: the hours an edge cuts and the units
-- of asOf's date not settled), without grouping the settled sessions again:
-- - the sums that need no session: the base's parts and the fresh classes' parts, per window;
-- - what needs the session: the base's counts, plus each session the fresh classes touch (all its
--   classes, the settled ones too, found by its key) and less that session's settled part, which
--   the base counted; the startup-time percentile from the top of the base's values (its band)
--   with the same values added and taken back, when what the percentile needs lies in the band;
-- - activity: over the touched sessions and the base's late sessions (no other settled session
--   can be active at asOf: their latest report is older than the horizon).
-- `valid` is false for every row of a stream for which some window's percentile does not lie in
-- the band (or the band lost a value it did not hold): snapshot-summaries.ts makes that stream's
-- rows from all of its classes instead (window_summaries.sql). Every other row equals that
-- statement's, to the last digit: counts and DECIMAL sums are added and taken back exactly, and
-- the percentile is quantile_cont's interpolation, lo * (1 - d) + hi * d at (n - 1) * 0.95.
-- Placeholders: <into> `CREATE OR REPLACE TEMP TABLE summaries_inc AS` or `INSERT INTO
-- summaries_inc`; <fresh>, <settled>, <base> the run's rows of each (snapshot-summaries.ts: a
-- filter by customer and streamId range); <stream_piece_sums>, <stream_piece_columns>,
-- <session_peer_mean>, <window_delivery_figures>,
-- <window_quality_figures> (piece-columns.ts).
-- Parameters: $as_of (TIMESTAMP), $window_names (VARCHAR[5]), $horizon_seconds.
-- Reads: <fresh>, <settled>, <base>. Writes: summaries_inc.
{{into}}
WITH
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
stream_parts AS (
  SELECT streamId, class, {{stream_piece_sums}} FROM fresh GROUP BY ALL
  UNION ALL BY NAME
  SELECT streamId, class, {{stream_piece_columns}} FROM base WHERE kind = 'part'
),
stream_windows AS (
  SELECT w.windowName, p.streamId, {{stream_piece_sums}}
  FROM stream_parts AS p
  JOIN windows AS w ON p.class <= w.class
  GROUP BY ALL
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
band_ranked AS (
  SELECT *, sum(n) OVER (PARTITION BY windowName, streamId ORDER BY v DESC) AS upto FROM band_counts
),
-- quantile_cont(startup_ms, 0.95) over n values: at position p = (n - 1) * 0.95 from the
-- smallest, the values at floor(p) and ceil(p), i.e. at n - 1 - floor(p) and n - 1 - ceil(p) from
-- the largest; the band's `upto` is how many values are >= v.
positions AS (
  SELECT windowName, streamId, startup_n, p, startup_n - 1 - CAST(floor(p) AS BIGINT) AS t_lo, startup_n - 1 - CAST(ceil(p) AS BIGINT) AS t_hi, p - floor(p) AS d
  FROM (SELECT *, CAST(startup_n - 1 AS DOUBLE) * CAST(0.95 AS DOUBLE) AS p FROM session_counts WHERE startup_n > 0)
),
percentiles AS (
  SELECT
    t.windowName, t.streamId,
    CAST(max(r.v) FILTER (WHERE r.upto >= t.t_lo + 1) AS DOUBLE) AS v_lo,
    CAST(max(r.v) FILTER (WHERE r.upto >= t.t_hi + 1) AS DOUBLE) AS v_hi,
    any_value(t.d) AS d,
    coalesce(max(r.upto), 0) >= any_value(t.t_lo) + 1 AND coalesce(min(r.n), 1) > 0 AS valid
  FROM positions AS t
  LEFT JOIN band_ranked AS r USING (windowName, streamId)
  GROUP BY ALL
),
sc AS (
  SELECT c.windowName, c.streamId, c.sessions, c.peer_mean_sum, c.peer_sessions, p.v_lo * (1 - p.d) + p.v_hi * p.d AS startup_p95, coalesce(p.valid, true) AS valid
  FROM session_counts AS c
  LEFT JOIN percentiles AS p USING (windowName, streamId)
),
session_last AS (
  SELECT streamId, sessionId, max(last_ts) AS last_ts, max(last_final_ts) AS last_final_ts
  FROM (
    SELECT streamId, sessionId, last_ts, last_final_ts FROM touched_sessions
    UNION ALL
    SELECT streamId, sessionId, last_ts, last_final_ts FROM base WHERE kind = 'late'
  )
  GROUP BY ALL
),
-- Activity and the row's columns (stream_summary_row.sql), then the run's own.
{{@stream_summary_row}},
  split_part(sw.streamId, ':', 1) AS customer,
  bool_and(sc.valid) OVER (PARTITION BY sw.streamId) AS valid
FROM stream_windows AS sw
JOIN sc USING (windowName, streamId)
LEFT JOIN stream_activity AS a USING (streamId)
