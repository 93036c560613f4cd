-- Deduplicates `reports` (dedup_raw.sql) in place by dedup_reports.sql's rule, then drops the file,
-- the row and the provenance: what is left is every column the reports were loaded with, one copy
-- of each reportId. No parameter. Reads: report_files. Reads and writes: reports (temp).
DELETE FROM reports WHERE (file_index, file_row_number) IN (
  WITH dedup_input AS NOT MATERIALIZED (
    SELECT f.filename, r.file_row_number, r.reportId, r._source_file, r._source_row
    FROM reports AS r JOIN report_files AS f USING (file_index)
  ),
  {{@dedup_reports}}
  SELECT f.file_index, d.file_row_number FROM dedup_dropped AS d JOIN report_files AS f USING (filename)
);
ALTER TABLE reports DROP COLUMN file_index;
ALTER TABLE reports DROP COLUMN file_row_number;
ALTER TABLE reports DROP COLUMN _source_file;
ALTER TABLE reports DROP COLUMN _source_row;
DROP TABLE report_files;
