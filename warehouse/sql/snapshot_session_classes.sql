-- The session classes of every stream at asOf (session_classes.sql over the window pieces), kept
-- for the snapshot's files of each customer and its stream quality rows.
-- Placeholders: those of session_classes.sql, <pieces> window_pieces.
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[4]).
-- Reads: window_pieces (window_pieces.sql). Writes: session_classes.
CREATE OR REPLACE TEMP TABLE session_classes AS
{{@session_classes}}
