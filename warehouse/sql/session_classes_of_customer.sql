-- One customer's session classes of its recent days, as its snapshot's part-0 file holds them:
-- sorted by stream, so that a read of one stream touches few row groups.
-- Placeholders: none. Parameters: $customer.
-- Reads: session_classes_recent (snapshot_session_classes.sql). Writes: nothing (a query, copied to the
-- customer's session_classes file).
SELECT * EXCLUDE (customer)
FROM session_classes_recent
WHERE customer = $customer
ORDER BY streamId
