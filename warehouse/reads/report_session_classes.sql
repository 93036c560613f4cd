-- The session classes (session_classes.sql) of the deduplicated reports of a session's `reports`
-- table, each report a piece of its own (report_pieces.sql): what breakdowns of reports read (the
-- pilot report's device, region and version lists).
-- Placeholders: those of session_classes.sql, <pieces> report_pieces.sql over reports.
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[4]).
-- Reads: reports (every session dimension, seq and the piece columns' report columns).
-- Writes: report_session_classes.
CREATE OR REPLACE TEMP TABLE report_session_classes AS
{{@session_classes}}
