-- A merged layer's series pieces (layer-merge.ts) from those of the layers it merges, in the shape
-- and order of a layer's file: its minute pieces (per stream, session and minute: layer_pieces.sql's
-- `layer_minutes`, by start_us) or its per-session buckets of the coarse sizes (per size, stream,
-- session and bucket: layer_sessions.sql's, by size and start_us). A session's piece is the sum of
-- its pieces in each layer, as grouping the merged reports would make it. One part of them: the
-- pieces whose keys pass <part>, a range of the file's order (layered-state.ts writes each part to
-- a file of its own, one statement each, then the parts in order as the layer's file: pieces of
-- two parts never share a key, and a part's grouping is a fraction of the whole's memory; at
-- 150,000 sessions at once the day's per-session buckets grouped at once ran out of memory at 256MB).
-- Placeholders: <files> the merged layers' files of that kind (quoted paths); <keys> the pieces'
-- key columns, in the file's order; <part> a condition on them (code values); <order> the file's
-- order; <series_piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: <files>. Writes: nothing (a query, copied to a part file).
SELECT
  {{keys}},
  {{series_piece_sums}}
FROM read_parquet({{files}}, hive_partitioning = false)
WHERE {{part}}
GROUP BY ALL
ORDER BY {{order}}
