-- The reports of `raw_reports` up to $as_of into `reports`, each with its file (an index into
-- `report_files`: a path per row would hold ~100 bytes a report), row and provenance, for
-- dedup_raw_delete.sql to deduplicate (dedup_reports.sql's rule) in place: `raw_reports` is read
-- once (three reads of a view over Parquet cost 1.5-2x as much). Copies of a report carry the same
-- ts, so filtering on ts before deduplicating keeps the same copies.
-- Parameter: $as_of (TIMESTAMP; NULL: every report).
-- Reads: raw_reports, report_files (report_files.sql). Writes: reports (temp table).
CREATE OR REPLACE TEMP TABLE reports AS
SELECT r.* EXCLUDE (filename), f.file_index
FROM raw_reports AS r JOIN report_files AS f USING (filename)
WHERE $as_of IS NULL OR r.ts <= $as_of;
