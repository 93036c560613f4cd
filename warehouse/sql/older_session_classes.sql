-- A customer's session classes of its older days at asOf (older-classes.ts), as the snapshot's
-- part-1 file of the customer holds them: sorted by stream, so that a read of one stream touches
-- few row groups.
-- Placeholders: those of session_classes.sql; <pieces> the hour pieces of the customer's older
-- days (hour_pieces.sql over their files).
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[4]).
-- Reads: <pieces>. Writes: nothing (a query, copied to the state area's classes file).
SELECT * EXCLUDE (customer)
FROM (
{{@session_classes}}
)
ORDER BY streamId
