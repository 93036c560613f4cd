-- A merged layer's per-session buckets of the coarse sizes (layer-merge.ts) from those of the
-- layers it merges: a session's bucket of one size is the sum of its buckets in each layer (the
-- same sums layer_sessions.sql makes from the merged minutes), in the order of a layer's file.
-- Placeholders: <files> the merged layers' sessions files (quoted paths); <series_piece_sums>
-- (piece-columns.ts). Parameters: none.
-- Reads: <files>. Writes: nothing (a query, copied to the merged layer's sessions file).
SELECT
  bucketSeconds,
  streamId,
  sessionId,
  start_us,
  {{series_piece_sums}}
FROM read_parquet({{files}}, hive_partitioning = false)
GROUP BY ALL
ORDER BY bucketSeconds, start_us
