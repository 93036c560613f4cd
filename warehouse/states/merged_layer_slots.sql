-- A merged layer's slot pieces (layer_slot_rows.sql's shape), sorted by slot, regrouped from the
-- slot pieces of the layers it merges (layered-state.ts writeMergedLayerFiles, when each of them
-- has some). Pieces combine at their own types, so regrouping gives what grouping the reports at
-- once would.
-- Placeholders: <files> the merged layers' slots files (quoted paths); <piece_dimensions>,
-- <piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: <files>. Writes: nothing (a query, copied to the merged layer's slots file).
SELECT
  start_us,
  streamId,
  sessionId,
  {{piece_dimensions}},
  min(lo_us) AS lo_us,
  {{piece_sums}}
FROM read_parquet({{files}}, hive_partitioning = false)
GROUP BY ALL
ORDER BY start_us
