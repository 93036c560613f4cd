-- Slot pieces of report pieces: per (5-minute slot, stream, session, session dimensions), over the
-- reports that are not an hour's first instant (those are in the hour pieces' at_start pieces),
-- with lo_us the earliest report's instant. A window edge that cuts an hour then needs, report by
-- report, only the reports of the slot it falls in: the hour's other slots lie wholly on one side
-- of it (window-pieces.ts layeredEdgePieces; docs/warehouse-state.md, "Reading a layered state").
-- A layer's `layer_slots` (layer_pieces.sql), and a merged layer's from its reports when one of the
-- layers it merges has none (layered-state.ts writeMergedLayerFiles).
-- Placeholders: <reports> report pieces with their ts (a relation: code constants or a quoted
-- path); <slot_us> SLOT_US (a literal); <piece_dimensions>, <piece_sums> (piece-columns.ts).
-- Parameters: none.
-- Reads: <reports>. Writes: nothing (a query: start_us, streamId, sessionId, the dimensions, lo_us,
-- the piece columns; in no order).
SELECT
  epoch_us(ts) // {{slot_us}} * {{slot_us}} AS start_us,
  streamId,
  sessionId,
  {{piece_dimensions}},
  min(epoch_us(ts)) AS lo_us,
  {{piece_sums}}
FROM {{reports}}
WHERE epoch_us(ts) % 3600000000 <> 0
GROUP BY ALL
