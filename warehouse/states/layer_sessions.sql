-- A layer's per-session buckets of the standard sizes longer than 10 minutes (an hour, 6 hours
-- and a day), from its minute pieces: what the day's series of those sizes is remade from when a
-- later layer adds reports to one of their buckets (layered-state.ts), without reading every
-- minute of the hour or the day.
-- Placeholders: <coarse_sizes> the sizes in seconds (code constants); <series_piece_sums>
-- (piece-columns.ts). Parameters: none.
-- Reads: layer_minutes (layer_pieces.sql). Writes: layer_sessions.
CREATE OR REPLACE TEMP TABLE layer_sessions AS
SELECT
  CAST(z.size AS INTEGER) AS bucketSeconds,
  streamId,
  sessionId,
  start_us // (CAST(z.size AS BIGINT) * 1000000) * (CAST(z.size AS BIGINT) * 1000000) AS start_us,
  {{series_piece_sums}}
FROM layer_minutes CROSS JOIN (SELECT unnest([{{coarse_sizes}}]) AS size) AS z
GROUP BY ALL;
