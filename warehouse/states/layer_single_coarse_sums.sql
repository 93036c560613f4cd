-- The coarse sums (layer_coarse_sums.sql's columns, the same definitions) of a state of one layer:
-- from that layer's per-session buckets as they are. Its rows are already one per (size, stream,
-- session, bucket) (layer_sessions.sql), so the per-session regrouping that layer_coarse_sums.sql
-- does for buckets spanning several layers is skipped: a layer of a whole day (the first layered
-- build of a day, e.g. after a deployment) holds every session of the day.
-- Placeholders: <series_piece_sums>, <peer_mean_sum>, <peer_sessions> (piece-columns.ts).
-- Parameters: none.
-- Reads: layer_sessions (layer_sessions.sql). Writes: coarse_sums.
CREATE OR REPLACE TEMP TABLE coarse_sums AS
SELECT
  bucketSeconds, streamId, start_us,
  count(*) AS sessions,
  CAST(coalesce({{peer_mean_sum}}, 0) AS DECIMAL(38, 12)) AS peer_mean_sum,
  {{peer_sessions}} AS peer_sessions,
  {{series_piece_sums}}
FROM layer_sessions
GROUP BY bucketSeconds, streamId, start_us
