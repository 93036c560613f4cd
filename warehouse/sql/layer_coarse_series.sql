-- One size longer than 10 minutes of the series buckets that a new layer touches (`touched_coarse`),
-- from every layer's per-session buckets of that size (layer_sessions.sql), regrouped per session
-- (a session that spans layers is one session of a bucket): the rows layered-state.ts adds to
-- `coarse_rows` for each such size.
-- Placeholders: <kept_sessions> the per-session buckets of the layers kept from the previous
-- state (a query); <span> the least and greatest touched bucket start of the size, as a condition
-- on start_us with literals (session files are sorted by size, then start: a read skips the row
-- groups of other buckets, which the IN below cannot tell the scan); <series_piece_sums>
-- (piece-columns.ts). Parameters: $bucket_seconds.
-- Reads: layer_sessions, <kept_sessions>, touched_coarse. Writes: nothing (a query: series_of_buckets.sql's rows).
WITH session_buckets AS (
  SELECT streamId, sessionId, start_us, {{series_piece_sums}}
  FROM (SELECT * FROM layer_sessions UNION ALL BY NAME {{kept_sessions}}) AS s
  WHERE bucketSeconds = $bucket_seconds AND {{span}}
    AND start_us IN (SELECT start_us FROM touched_coarse WHERE bucketSeconds = $bucket_seconds)
  GROUP BY ALL
)
{{@series_of_buckets}}
