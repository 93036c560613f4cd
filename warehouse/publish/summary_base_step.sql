-- A customer's summary base one step on (summary-bases.ts chainedBases): the base of some classes
-- (`base`: summary_base.sql's rows, made of `settled`) with more classes (`fresh`: steady layers of
-- asOf's date the base does not hold) added, as summary_base.sql would make it of both, so that a
-- run whose steady layers grew by one adds that layer's sessions to the base of the others instead
-- of grouping the sessions of all of them again. The same three kinds of rows, sorted by stream:
-- - 'part': the base's parts and the fresh classes' parts, added up per stream and class at their
--   own types;
-- - 'window': the base's counts with each session the fresh classes touch added (+1, all of it)
--   and its settled part taken back (-1) (summary_deltas.sql); its band with their startup times
--   at or above its lower end added and taken back, and the same lower end: the band still holds
--   every value at or above it, so a window's percentile is found in it as in a base made of all
--   the classes (window_summaries_incremental.sql checks that it lies there). A window the base did
--   not have holds every value (`band_min` NULL).
-- - 'late': the base's late sessions and the touched ones, each at its latest report, those whose
--   latest report is at or after $late_from.
-- `valid` is false on a window's row when its band lost a value it did not hold (which a band that
-- holds every value at or above its lower end never does: a check); summary-bases.ts then makes
-- the base from all of its classes (summary_base.sql) instead, and writes the rows without it.
-- Placeholders: <fresh>, <settled>, <base> (relations: the fresh classes, the settled ones, the
-- base's rows); <stream_piece_kept_sums>, <stream_piece_columns>, <session_peer_mean>
-- (piece-columns.ts).
-- Parameters: $window_names (VARCHAR[5]), $late_from (TIMESTAMP).
-- Reads: <fresh>, <settled>, <base>. Writes: nothing (a query, into a table summary-bases.ts checks).
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
{{@summary_deltas}},
parts AS (
  SELECT streamId, class, {{stream_piece_kept_sums}}
  FROM (
    SELECT streamId, class, {{stream_piece_columns}} FROM fresh
    UNION ALL BY NAME
    SELECT streamId, class, {{stream_piece_columns}} FROM base WHERE kind = 'part'
  )
  GROUP BY ALL
),
-- Each value of the band as many times as it is there, the largest first.
band_lists AS (
  SELECT windowName, streamId, list(v ORDER BY v DESC) AS band, bool_and(n > 0) AS band_ok
  FROM (SELECT windowName, streamId, v, n, unnest(range(CAST(greatest(n, 1) AS BIGINT))) AS i FROM band_counts)
  GROUP BY ALL
),
window_rows AS (
  SELECT
    c.windowName, c.streamId, c.sessions, c.peer_mean_sum, c.peer_sessions, c.startup_n,
    b.band_min, l.band, coalesce(l.band_ok, true) AS valid
  FROM session_counts AS c
  LEFT JOIN base_windows AS b USING (windowName, streamId)
  LEFT JOIN band_lists AS l USING (windowName, streamId)
),
late_rows AS (
  SELECT streamId, sessionId, max(last_ts) AS last_ts, max(last_final_ts) AS last_final_ts
  FROM (
    SELECT streamId, sessionId, last_ts, last_final_ts FROM touched_sessions
    UNION ALL
    SELECT streamId, sessionId, last_ts, last_final_ts FROM base WHERE kind = 'late'
  )
  GROUP BY ALL
  HAVING max(last_ts) >= $late_from
)
SELECT * FROM (
  SELECT 'part' AS kind, *, true AS valid FROM parts
  UNION ALL BY NAME
  SELECT 'window' AS kind, * FROM window_rows
  UNION ALL BY NAME
  SELECT 'late' AS kind, *, true AS valid FROM late_rows
)
ORDER BY streamId, kind
