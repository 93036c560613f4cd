-- One customer's stream summaries, as its snapshot file holds them (by window, then stream).
-- Placeholders: none. Parameters: $customer.
-- Reads: summaries (window_summaries.sql). Writes: nothing (a query, copied to the customer's
-- stream_summaries file).
SELECT * EXCLUDE (customer)
FROM summaries
WHERE customer = $customer
ORDER BY windowName, streamId
