-- Per-session buckets of several layers as one row per (size, stream, session, bucket): a session's
-- bucket is in several rows when it spans layers (layer_sessions.sql makes each layer's); they are
-- added up here, before layer_coarse_sums.sql counts sessions per bucket.
-- Placeholders: <session_buckets> a query of layer_sessions.sql's rows of one or several layers;
-- <series_piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: <session_buckets>. Writes: nothing (a query: layer_sessions' columns).
SELECT bucketSeconds, streamId, sessionId, start_us, {{series_piece_sums}}
FROM ({{session_buckets}})
GROUP BY bucketSeconds, streamId, sessionId, start_us
