-- The slot pieces of a layered state's layers that lie in an hour a window edge cuts, but for the
-- slot the edge falls in (layer_pieces.sql `layer_slots`: each 5-minute slot of the hour's open
-- part lies wholly on one side of the edge, its pieces classed by their earliest report, lo_us):
-- a slot class unit's pieces (window-pieces.ts slotPiecesSql, class-units.ts). The edge's slot's
-- reports are read one by one (layer_edge_pieces.sql). The slots files are sorted by slot: a read
-- opens only the row groups of that hour. The layers hold each report once.
-- Placeholders (code constants, spliced): <files> the slots files of the state's layers that have
-- them; <hour_us> the hour's first instant, <cut_slot_us> the first instant of the
-- edge's slot, µs since the epoch (BIGINT literals); <piece_dimensions>, <piece_columns>
-- (piece-columns.ts).
-- Parameters: none.
-- Reads: <files>. Writes: nothing (a query: window_pieces.sql's columns).
SELECT streamId, sessionId, start_us, lo_us, {{piece_dimensions}}, {{piece_columns}}
FROM read_parquet({{files}}, hive_partitioning = false)
WHERE start_us >= {{hour_us}} AND start_us < {{hour_us}} + 3600000000 AND start_us <> {{cut_slot_us}}
