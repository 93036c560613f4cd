-- Deduplicated reports (ts <= asOf) and streams per customer: the `all` window's summaries
-- added up.
-- Placeholders: none. Parameters: none.
-- Reads: summaries (window_summaries.sql). Writes: nothing (a query: one row per customer that
-- has a stream).
SELECT customer, sum(reports) AS reports, count(*) AS streams
FROM summaries
WHERE windowName = 'all'
GROUP BY customer
