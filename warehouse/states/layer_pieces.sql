-- A layer's hour pieces and minute pieces from its report pieces (layer_rows), in the shapes of
-- state_pieces.sql (`state_hours` without customer and date, `state_minutes`): hour pieces per
-- (stream, session, hour, first instant or not, session dimensions), minute pieces per (stream,
-- session, minute) with the columns a series needs. Pieces combine at their own types.
-- Placeholders: <piece_sums>, <series_piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: layer_rows. Writes: layer_hours, layer_minutes, layer_slots (<slot_us>: SLOT_US, a literal).
CREATE OR REPLACE TEMP TABLE layer_hours AS
SELECT
  3600 AS grain,
  epoch_us(ts) // 3600000000 * 3600000000 AS start_us,
  epoch_us(ts) % 3600000000 = 0 AS at_start,
  streamId,
  sessionId,
  {{piece_dimensions}},
  {{piece_sums}}
FROM layer_rows
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE layer_minutes AS
SELECT
  streamId,
  sessionId,
  epoch_us(ts) // 60000000 * 60000000 AS start_us,
  {{series_piece_sums}}
FROM layer_rows
GROUP BY ALL;

-- Slot pieces: per (stream, session, 5-minute slot, session dimensions) over the reports that are
-- not an hour's first instant (those are in the hour pieces' at_start pieces), with lo_us the
-- earliest report's instant. A window edge that cuts an hour then needs, report by report, only
-- the reports of the slot it falls in: the hour's other slots lie wholly on one side of it
-- (window-pieces.ts, layeredEdgePieces; docs/warehouse-state.md, "Reading a layered state").
CREATE OR REPLACE TEMP TABLE layer_slots AS
SELECT
  epoch_us(ts) // {{slot_us}} * {{slot_us}} AS start_us,
  streamId,
  sessionId,
  {{piece_dimensions}},
  min(epoch_us(ts)) AS lo_us,
  {{piece_sums}}
FROM layer_rows
WHERE epoch_us(ts) % 3600000000 <> 0
GROUP BY ALL;
