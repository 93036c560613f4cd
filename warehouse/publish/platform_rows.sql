-- The platform-wide rows, one per window, as the snapshot's platform_summaries file holds them.
-- Placeholders: none. Parameters: none.
-- Reads: added_up (added_up.sql). Writes: nothing (a query, copied to the snapshot's file).
SELECT * EXCLUDE (customer) FROM added_up WHERE customer IS NULL
