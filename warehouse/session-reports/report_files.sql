-- The files `raw_reports` was read from, each once with a number of its own (what dedup_raw.sql
-- keeps of a report's file): a path listed twice must not join its rows twice.
-- Placeholder: <files> the list of quoted paths (fileList), as given to read_parquet.
-- Writes: report_files (temp table: file_index, filename).
CREATE OR REPLACE TEMP TABLE report_files AS
SELECT unnest(range(len(l))) AS file_index, CAST(unnest(l) AS VARCHAR) AS filename FROM (SELECT list_distinct({{files}}) AS l);
