-- What each partition's state records of its pieces: deduplicated reports, streams, the latest
-- report time (ISO 8601, UTC) and hour pieces, per (customer, date) of a batch.
-- Placeholders: none. Parameters: none.
-- Reads: state_hours (state_pieces.sql). Writes: nothing (a query: one row per partition that
-- has reports).
SELECT customer, CAST(date AS VARCHAR) AS date, sum(reports) AS n, count(DISTINCT streamId) AS streams,
       strftime(max(last_ts), '%Y-%m-%dT%H:%M:%S.%fZ') AS max_ts, count(*) AS hours
FROM state_hours GROUP BY ALL
