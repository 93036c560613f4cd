-- A layer's hour pieces and minute pieces from its report pieces (layer_rows), in the shapes of
-- state_pieces.sql (`state_hours` without customer and date, `state_minutes`): hour pieces per
-- (stream, session, hour, first instant or not, session dimensions), minute pieces per (stream,
-- session, minute) with the columns a series needs. Pieces combine at their own types.
-- Placeholders: <piece_sums>, <series_piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: layer_rows. Writes: layer_hours, layer_minutes, layer_slots (<reports> layer_rows, <slot_us>:
-- layer_slot_rows.sql's).
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

-- Slot pieces (layer_slot_rows.sql) of the layer's reports.
CREATE OR REPLACE TEMP TABLE layer_slots AS
{{@layer_slot_rows}};
