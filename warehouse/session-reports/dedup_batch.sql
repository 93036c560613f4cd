-- The deduplicated reports of a batch of partitions (dedup_reports.sql's rule), without
-- materialising them: the copies to drop are found from reportId, file and row alone, and
-- `reports` is a view that reads the batch's files again where it is used (state_pieces.sql).
-- Placeholders: none. Parameters: none.
-- Reads: raw_reports (load_raw.sql, a VIEW over the batch's files).
-- Writes: dedup_dropped (table: the file and row of each copy dropped), reports (view: every
-- column raw_reports has but the file, the row and the provenance).
CREATE OR REPLACE TEMP TABLE dedup_dropped AS
WITH dedup_input AS (SELECT reportId, filename, file_row_number, _source_file, _source_row FROM raw_reports),
{{@dedup_reports}}
SELECT * FROM dedup_dropped;
CREATE OR REPLACE TEMP VIEW reports AS
SELECT * EXCLUDE (filename, file_row_number, _source_file, _source_row) FROM raw_reports ANTI JOIN dedup_dropped USING (filename, file_row_number);
