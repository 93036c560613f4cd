-- The session classes at asOf of one class unit's hour pieces (class-units.ts), as the snapshot's
-- files of its customer hold them: sorted by stream, so that a read of one stream touches few row
-- groups.
-- Placeholders: those of session_classes.sql; <pieces> the unit's hour pieces (hour_pieces.sql
-- over its files).
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[4]).
-- Reads: <pieces>. Writes: nothing (a query, copied to the unit's classes file in the state area).
SELECT * EXCLUDE (customer)
FROM (
{{@session_classes}}
)
ORDER BY streamId
