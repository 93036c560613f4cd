-- Deduplicates `reports` (dedup_raw.sql) in place by dedup_reports.sql's rule, then drops the file,
-- the row and the provenance: what is left is every column the reports were loaded with, one copy
-- of each reportId. No parameter. Reads and writes: reports (temp).
DELETE FROM reports WHERE (filename, file_row_number) IN (
  WITH dedup_input AS NOT MATERIALIZED (
    SELECT filename, file_row_number, reportId, _source_file, _source_row FROM reports
  ),
  {{@dedup_reports}}
  SELECT filename, file_row_number FROM dedup_dropped
);
ALTER TABLE reports DROP COLUMN filename;
ALTER TABLE reports DROP COLUMN file_row_number;
ALTER TABLE reports DROP COLUMN _source_file;
ALTER TABLE reports DROP COLUMN _source_row;
