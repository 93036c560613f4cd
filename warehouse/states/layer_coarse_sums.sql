-- The partial sums of a layered state's series buckets longer than a minute (5 and 10 minutes, an hour, 6 hours,
-- a day), per (size, stream, bucket), from per-session buckets of those sizes: the distinct
-- sessions, the sum of each session's mean peerCount and the sessions that have one (avgPeerCount's
-- numerator and denominator), and the series piece sums. A state keeps them (`coarse.parquet`), so
-- that a later layer updates the buckets it touches from the sessions it brings
-- (layer_coarse_delta.sql) instead of regrouping every session of the day; the series rows of
-- those buckets are made from them (coarse_series_rows.sql).
-- Placeholders: <session_buckets> a query of per-session buckets (bucketSeconds, streamId,
-- sessionId, start_us and the series piece columns: layer_sessions.sql's rows of one or several
-- layers; a session's bucket is in several rows when it spans layers: they are added up first);
-- <series_piece_sums>, <peer_mean_sum>, <peer_sessions> (piece-columns.ts). Parameters: none.
-- Reads: <session_buckets>. Writes: nothing (a query: coarse_sums' columns).
SELECT
  bucketSeconds, streamId, start_us,
  count(*) AS sessions,
  CAST(coalesce({{peer_mean_sum}}, 0) AS DECIMAL(38, 12)) AS peer_mean_sum,
  {{peer_sessions}} AS peer_sessions,
  {{series_piece_sums}}
FROM (
  SELECT bucketSeconds, streamId, sessionId, start_us, {{series_piece_sums}}
  FROM ({{session_buckets}})
  GROUP BY bucketSeconds, streamId, sessionId, start_us
)
GROUP BY bucketSeconds, streamId, start_us
