-- One customer's session classes of the hours a window edge cuts, as its snapshot's part-0 file
-- holds them: sorted by stream, so that a read of one stream touches few row groups.
-- Placeholders: none. Parameters: $customer.
-- Reads: session_classes_cut (snapshot_session_classes.sql). Writes: nothing (a query, copied to
-- the customer's part-0 session_classes file).
SELECT * EXCLUDE (customer)
FROM session_classes_cut
WHERE customer = $customer
ORDER BY streamId
