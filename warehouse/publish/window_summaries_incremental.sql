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
{{@summary_session_deltas}},
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
-- Activity and the row's columns (stream_summary_row.sql), then the run's own.
{{@stream_summary_row}},
  split_part(sw.streamId, ':', 1) AS customer,
  bool_and(sc.valid) OVER (PARTITION BY sw.streamId) AS valid
FROM stream_windows AS sw
JOIN sc USING (windowName, streamId)
LEFT JOIN stream_activity AS a USING (streamId)
