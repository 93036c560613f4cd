-- The reports of `raw_reports` up to $as_of into `reports`, each with its file, row and provenance,
-- for dedup_raw_delete.sql to deduplicate (dedup_reports.sql's rule) in place: `raw_reports` is
-- read once (three reads of a view over Parquet cost 1.5-2x as much), and copies of a report carry
-- the same ts, so filtering on ts before deduplicating keeps the same copies.
-- Parameter: $as_of (TIMESTAMP; NULL: every report). Reads: raw_reports. Writes: reports (temp).
CREATE OR REPLACE TEMP TABLE reports AS
SELECT * FROM raw_reports WHERE $as_of IS NULL OR ts <= $as_of;
