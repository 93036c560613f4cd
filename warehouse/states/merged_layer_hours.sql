-- A merged layer's hour pieces (layer-merge.ts) from the hour pieces of the layers it merges, in
-- the shape of layer_pieces.sql's `layer_hours`: pieces combine at their own types, so regrouping
-- the layers' pieces gives what grouping their reports would, without reading the reports again.
-- Placeholders: <files> the merged layers' hours files (quoted paths); <piece_dimensions>,
-- <piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: <files>. Writes: nothing (a query, copied to the merged layer's hours file).
SELECT
  grain,
  start_us,
  at_start,
  streamId,
  sessionId,
  {{piece_dimensions}},
  {{piece_sums}}
FROM read_parquet({{files}}, hive_partitioning = false)
GROUP BY ALL
