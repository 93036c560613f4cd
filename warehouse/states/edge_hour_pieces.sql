-- One state's pieces of one hour that a window edge cuts: its reports of the open hour after
-- $hour_start (the hour's first instant is in its hour piece), kept beside the state the first
-- time an edge cuts the hour (a state's reports of an hour never change).
-- Placeholders: <piece_dimensions>, <piece_columns> (piece-columns.ts).
-- Parameters: $customer (VARCHAR), $hour_start and $hour_end (BIGINT, µs since the epoch).
-- Reads: edge_reports (edge_reports.sql). Writes: nothing (a query: window_pieces.sql's columns,
-- copied to the state's edge-hour file).
SELECT streamId, sessionId, start_us, lo_us, {{piece_dimensions}}, {{piece_columns}}
FROM edge_reports
WHERE customer = $customer AND start_us > $hour_start AND start_us < $hour_end
