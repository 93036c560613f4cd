-- The session classes at asOf of the hours an edge cuts (session_classes.sql over the window
-- pieces), kept for the snapshot's part-0 file of each customer and, with the class units' (the
-- hour pieces), its summaries (session_classes_view.sql).
-- Placeholders: those of session_classes.sql, <pieces> window_pieces.
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[4]).
-- Reads: window_pieces (window_pieces.sql). Writes: session_classes_cut.
CREATE OR REPLACE TEMP TABLE session_classes_cut AS
{{@session_classes}}
