-- The raw reports a load read (before deduplication), for the snapshot manifest's figures.
-- Placeholders: none. Parameters: none.
-- Reads: raw_reports (load_raw.sql). Writes: nothing (a query: one row, n).
SELECT count(*) AS n FROM raw_reports
