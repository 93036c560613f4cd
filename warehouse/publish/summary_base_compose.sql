-- The summary base of a customer's settled classes (the rows of summary_base.sql, the same to the
-- last digit but for the band, which may hold fewer values) made from the base of those that stay
-- settled for all of asOf's date (<base>, made once a day over the day file's rows <settled>;
-- class-units.ts SETTLED_GROUPS) and the rows of the others (<fresh>, the hour file's: the days
-- the window edges fall in and the settled layers of asOf's date), instead of grouping every
-- settled session again at the first run of each hour (summary-bases.ts):
-- - 'part': the day base's parts and the hour rows' sums, added up per stream and class;
-- - 'window': the day base's counts, plus each session the hour rows touch (all of it, its day
--   rows found by its key) and less that session's day part (summary_session_deltas.sql). The
--   band is every value at or above the day base's lower end (`band_min`, NULL: every value): the
--   day base's band with the touched sessions' values added and taken back. It holds every value
--   at or above `band_min`, as a base's band must; it may hold fewer values than summary_base.sql
--   would keep, which only makes a tick's summaries recompute a stream more often. A band that
--   lost a value it did not hold (never, from a base of those rows) is left empty with the largest
--   `band_min`, so that every tick recomputes that stream;
-- - 'late': the touched sessions (all of each) and the day base's late sessions, those whose latest
--   report is at or after $late_from.
-- Placeholders: <fresh> the hour file's rows, <settled> the day file's, <base> the day base
-- (read_parquet of the customer's files);
-- <stream_piece_kept_sums>, <stream_piece_columns>, <session_peer_mean> (piece-columns.ts).
-- Parameters: $window_names (VARCHAR[5]), $late_from (TIMESTAMP).
-- Reads: <fresh>, <settled>, <base>. Writes: nothing (a query, copied to the base file).
WITH
{{@summary_session_deltas}},
stream_parts AS (
  SELECT streamId, class, {{stream_piece_kept_sums}}
  FROM (
    SELECT streamId, class, {{stream_piece_columns}} FROM fresh
    UNION ALL
    SELECT streamId, class, {{stream_piece_columns}} FROM base WHERE kind = 'part'
  )
  GROUP BY ALL
),
band_lost AS (
  SELECT DISTINCT windowName, streamId FROM band_counts WHERE n < 0
),
band_lists AS (
  SELECT windowName, streamId, list(v ORDER BY v DESC) AS band
  FROM (SELECT windowName, streamId, v, unnest(range(CAST(n AS BIGINT))) FROM band_counts WHERE n > 0)
  GROUP BY ALL
),
window_rows AS (
  SELECT
    c.windowName, c.streamId, c.sessions,
    CAST(c.peer_mean_sum AS DECIMAL(38, 12)) AS peer_mean_sum,
    c.peer_sessions, c.startup_n,
    CASE WHEN l.streamId IS NULL THEN b.band_min ELSE CAST(2147483647 AS INTEGER) END AS band_min,
    CASE WHEN l.streamId IS NULL THEN bl.band ELSE CAST([] AS INTEGER[]) END AS band
  FROM session_counts AS c
  LEFT JOIN base_windows AS b USING (windowName, streamId)
  LEFT JOIN band_lists AS bl USING (windowName, streamId)
  LEFT JOIN band_lost AS l USING (windowName, streamId)
),
late_rows AS (
  SELECT * FROM session_last WHERE last_ts >= $late_from
)
SELECT * FROM (
  SELECT 'part' AS kind, * FROM stream_parts
  UNION ALL BY NAME
  SELECT 'window' AS kind, * FROM window_rows
  UNION ALL BY NAME
  SELECT 'late' AS kind, * FROM late_rows
)
ORDER BY streamId, kind
