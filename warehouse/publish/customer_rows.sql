-- The per-customer rows of every window, as the snapshot's customer_summaries file holds them.
-- Placeholders: none. Parameters: none.
-- Reads: added_up (added_up.sql). Writes: nothing (a query, copied to the snapshot's file).
SELECT * FROM added_up WHERE customer IS NOT NULL ORDER BY customer, windowName
