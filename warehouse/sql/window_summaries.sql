-- The stream summaries of every window at asOf (stream_summaries.sql over the window pieces), with
-- the customer of each stream.
-- Placeholders: <pieces> window_pieces; <stream_piece_sums> (piece-columns.ts).
-- Parameters: those of stream_summaries.sql ($as_of, $window_names, $window_seconds,
-- $horizon_seconds).
-- Reads: window_pieces (window_pieces.sql). Writes: summaries.
CREATE OR REPLACE TEMP TABLE summaries AS
SELECT *, split_part(streamId, ':', 1) AS customer FROM (
{{@stream_summaries}}
)
