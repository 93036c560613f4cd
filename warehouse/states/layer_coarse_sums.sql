-- The partial sums of a layered state's series buckets longer than a minute (5 and 10 minutes, an hour, 6 hours,
-- a day), per (size, stream, bucket), from per-session buckets of those sizes: the distinct
-- sessions, the sum of each session's mean peerCount and the sessions that have one (avgPeerCount's
-- numerator and denominator), and the series piece sums. A state keeps them (`coarse.parquet`), so
-- that a later layer updates the buckets it touches from the sessions it brings
-- (layer_coarse_delta.sql) instead of regrouping every session of the day; the series rows of
-- those buckets are made from them (coarse_series_rows.sql).
-- Placeholders: <per_session_buckets> a query of per-session buckets, one row per (bucketSeconds,
-- streamId, sessionId, start_us) with the series piece columns: a single layer's layer_sessions
-- as they are (layer_sessions.sql's rows), or the rows of several layers added up first
-- (layer_session_buckets.sql); <series_piece_sums>, <peer_mean_sum>, <peer_sessions>
-- (piece-columns.ts). Parameters: none.
-- Reads: <per_session_buckets>. Writes: nothing (a query: coarse_sums' columns).
SELECT
  bucketSeconds, streamId, start_us,
  count(*) AS sessions,
  CAST(coalesce({{peer_mean_sum}}, 0) AS DECIMAL(38, 12)) AS peer_mean_sum,
  {{peer_sessions}} AS peer_sessions,
  {{series_piece_sums}}
FROM ({{per_session_buckets}})
GROUP BY bucketSeconds, streamId, start_us
