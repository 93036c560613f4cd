-- The rows each stream's summaries read, in the order of its streamId, to cut the streams into
-- runs (snapshot-summaries.ts): its session classes other than the settled ones, and its rows of
-- its customer's summary base (summary_base.sql), when there is one.
-- Placeholders: <bases> `UNION ALL SELECT customer, streamId, count(*) FROM summary_bases GROUP BY
-- ALL`, or nothing. Parameters: none.
-- Reads: session_classes_fresh (session_classes_view.sql), summary_bases. Writes: nothing (a
-- query: customer, streamId, n).
SELECT customer, streamId, sum(n) AS n
FROM (
  SELECT customer, streamId, count(*) AS n FROM session_classes_fresh GROUP BY ALL
  {{bases}}
)
GROUP BY customer, streamId
ORDER BY streamId, customer
