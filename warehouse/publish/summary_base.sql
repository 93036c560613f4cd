-- What a customer's settled session classes (its units that end by the start of the hour before
-- asOf's, combine-plan.ts settledBeforeUs; in one file: class-units.ts) give every summary of the snapshot, kept in the state area beside that file
-- (summary-bases.ts) so that a tick adds only the other classes to it
-- (window_summaries_incremental.sql) instead of grouping every session of the history again.
-- One file, three kinds of rows (`kind`), sorted by stream:
-- - 'part': per stream and class, the sums that need no session (stream_summaries.sql's
--   stream_parts), each at its own type (BIGINT, as Parquet stores it exactly);
-- - 'window': per window and stream, what its sessions give: how many (`sessions`), the sum of
--   their mean peer counts and how many have one (`peer_mean_sum`, `peer_sessions`), how many have
--   a startup time (`startup_n`), and the top of their startup times (`band`: every value >=
--   `band_min`, with repeats, the largest first). The top holds ceil(5 % of startup_n) values (what
--   the 95th percentile needs from the top) plus $band_extra_fraction of them plus $band_margin, so
--   that sessions a tick adds or takes back do not push the percentile out of it; `band_min` is
--   NULL when the band holds every value.
-- - 'late': the sessions whose latest report is at or after $late_from (where the settled units
--   end, less the horizon), with their latest and latest final report: the only ones of these
--   classes that can be active at any asOf the base serves (asOf is later than where they end).
-- Placeholders: <settled> the settled classes (a read_parquet of the customer's file);
-- <stream_piece_kept_sums> and <peer_mean_sum>, <peer_sessions> (piece-columns.ts).
-- Parameters: $window_names (VARCHAR[5]), $late_from (TIMESTAMP), $band_extra_fraction (DOUBLE),
-- $band_margin (BIGINT).
-- Reads: <settled>. Writes: nothing (a query, copied to the base file).
WITH
classed AS (
  SELECT * FROM {{settled}}
),
-- windows, sessions, session_windows (window_sessions.sql).
{{@window_sessions}},
stream_parts AS (
  SELECT streamId, class, {{stream_piece_kept_sums}}
  FROM classed
  GROUP BY ALL
),
ranked AS (
  SELECT
    windowName, streamId, startup_ms,
    row_number() OVER (PARTITION BY windowName, streamId ORDER BY startup_ms DESC) AS r,
    count(*) OVER (PARTITION BY windowName, streamId) AS n
  FROM session_windows
  WHERE startup_ms IS NOT NULL
),
band_edges AS (
  SELECT windowName, streamId, max(startup_ms) FILTER (WHERE r = k AND n > k) AS band_min
  FROM (
    SELECT *, CAST(ceil(n * 0.05) + ceil(n * $band_extra_fraction) AS BIGINT) + $band_margin AS k
    FROM ranked
  )
  GROUP BY ALL
),
window_counts AS (
  SELECT
    s.windowName, s.streamId,
    count(*) AS sessions,
    {{peer_mean_sum}} AS peer_mean_sum,
    {{peer_sessions}} AS peer_sessions,
    count(s.startup_ms) AS startup_n,
    any_value(e.band_min) AS band_min,
    list(s.startup_ms ORDER BY s.startup_ms DESC) FILTER (WHERE s.startup_ms >= coalesce(e.band_min, s.startup_ms)) AS band
  FROM session_windows AS s
  LEFT JOIN band_edges AS e USING (windowName, streamId)
  GROUP BY ALL
)
SELECT * FROM (
  SELECT 'part' AS kind, * FROM stream_parts
  UNION ALL BY NAME
  SELECT 'window' AS kind, * FROM window_counts
  UNION ALL BY NAME
  SELECT 'late' AS kind, streamId, sessionId, last_ts, last_final_ts
  FROM sessions
  WHERE last_ts >= $late_from
)
ORDER BY streamId, kind
