-- The reports of `raw_reports` up to $as_of into `reports`, each with its file (an index into
-- `report_files`, not a path per row), row and provenance, for dedup_raw_delete.sql to
-- deduplicate (dedup_reports.sql's rule) in place: a view over Parquet is read once, not once per
-- step of the rule. Copies of a report carry the same ts, so filtering on ts before deduplicating
-- keeps the same copies.
-- Parameter: $as_of (TIMESTAMP; NULL: every report).
-- Reads: raw_reports, report_files (report_files.sql). Writes: reports (temp table).
CREATE OR REPLACE TEMP TABLE reports AS
SELECT r.* EXCLUDE (filename), f.file_index
FROM raw_reports AS r JOIN report_files AS f USING (filename)
WHERE $as_of IS NULL OR r.ts <= $as_of;
