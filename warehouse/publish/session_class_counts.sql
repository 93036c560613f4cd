-- The session-class rows of each stream of the snapshot, in the order of its streamId, to cut the
-- streams into runs for the summaries (snapshot-summaries.ts).
-- Placeholders: none. Parameters: none.
-- Reads: session_classes (session_classes_view.sql). Writes: nothing (a query: customer, streamId, n).
SELECT customer, streamId, count(*) AS n
FROM session_classes
GROUP BY customer, streamId
ORDER BY streamId, customer
