-- A merged layer's minute pieces (layer-merge.ts) from those of the layers it merges, in the shape
-- and order of layer_pieces.sql's `layer_minutes` as a layer's file holds them (by start_us).
-- Placeholders: <files> the merged layers' minutes files (quoted paths); <series_piece_sums>
-- (piece-columns.ts). Parameters: none.
-- Reads: <files>. Writes: nothing (a query, copied to the merged layer's minutes file).
SELECT
  streamId,
  sessionId,
  start_us,
  {{series_piece_sums}}
FROM read_parquet({{files}}, hive_partitioning = false)
GROUP BY ALL
ORDER BY start_us
