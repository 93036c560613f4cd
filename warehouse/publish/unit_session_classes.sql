-- The session classes at asOf of one class unit's hour pieces (class-units.ts), as the snapshot's
-- files of its customer hold them: sorted by stream, so that a read of one stream touches few row
-- groups; a unit read only through its customer's combined file (sorted when it is made) is left
-- in no order (sorting a unit's rows costs more than grouping them).
-- Placeholders: those of session_classes.sql; <pieces> the unit's hour pieces (hour_pieces.sql
-- over its files); <order> `ORDER BY streamId`, or nothing.
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[4]).
-- Reads: <pieces>. Writes: nothing (a query, copied to the unit's classes file in the state area).
SELECT * EXCLUDE (customer)
FROM (
{{@session_classes}}
)
{{order}}
