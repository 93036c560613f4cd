-- One customer's session classes, as its snapshot file holds them: sorted by stream, so that a
-- read of one stream touches few row groups.
-- Placeholders: none. Parameters: $customer.
-- Reads: session_classes (snapshot_session_classes.sql). Writes: nothing (a query, copied to the
-- customer's session_classes file).
SELECT * EXCLUDE (customer)
FROM session_classes
WHERE customer = $customer
ORDER BY streamId
