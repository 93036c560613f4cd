-- The session-class rows of each customer of the snapshot, to group customers for the summaries
-- (snapshot-summaries.ts).
-- Placeholders: none. Parameters: none.
-- Reads: session_classes (session_classes_view.sql). Writes: nothing (a query: customer, n).
SELECT customer, count(*) AS n
FROM session_classes
GROUP BY customer
