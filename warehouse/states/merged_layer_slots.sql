-- A merged layer's slot pieces (layer_pieces.sql's `layer_slots`), sorted by slot, regrouped from
-- <pieces>: the slot pieces of the layers it merges when each has them, else each report of the
-- merged layer a slot piece of its own (layered-state.ts writeMergedLayerFiles; a layer made
-- before layers had slot pieces has none). Pieces combine at their own types, so either gives
-- what grouping the reports at once would.
-- Placeholders: <pieces> a relation of slot pieces (start_us, streamId, sessionId, lo_us, the
-- dimensions, the piece columns; code constants and quoted paths); <piece_dimensions>,
-- <piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: <pieces>. Writes: nothing (a query, copied to the merged layer's slots file).
SELECT
  start_us,
  streamId,
  sessionId,
  {{piece_dimensions}},
  min(lo_us) AS lo_us,
  {{piece_sums}}
FROM {{pieces}}
GROUP BY ALL
ORDER BY start_us
