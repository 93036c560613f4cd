-- The minute pieces of every layer of a partition state, one row per (stream, session, minute):
-- what the state's series of every standard size is made of (partition-state.ts buildSeries).
-- Placeholders: <kept> the minute files of the layers kept from the previous state (a list of
-- quoted paths) or an empty query; <series_piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: layer_minutes (layer_pieces.sql), <kept>. Writes: state_minutes.
CREATE OR REPLACE TEMP TABLE state_minutes AS
SELECT streamId, sessionId, start_us, {{series_piece_sums}}
FROM (SELECT * FROM layer_minutes UNION ALL BY NAME {{kept}})
GROUP BY ALL;
