-- The deduplicated reports of `raw_reports` (dedup_reports.sql's rule) into `reports`, every
-- column it was loaded with but the file, the row and the provenance. Copies of a report carry the same ts, so filtering on ts before
-- deduplicating keeps the same copies. Parameter: $as_of (NULL: every report).
CREATE OR REPLACE TEMP TABLE reports AS
WITH dedup_input AS NOT MATERIALIZED (
  SELECT * FROM raw_reports WHERE $as_of IS NULL OR ts <= $as_of
),
{{@dedup_reports}}
SELECT * EXCLUDE (filename, file_row_number, _source_file, _source_row)
FROM dedup_input ANTI JOIN dedup_dropped USING (filename, file_row_number);
