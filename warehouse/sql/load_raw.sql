-- One customer's landed reports, the rollup's columns only, with the file each row came from.
-- <files>: the partition's files (spliced: DuckDB resolves file lists when it prepares).
-- <projection>: each column cast to its session-report.md type, or its default when no file
-- has it (report-columns.ts builds it from the column catalog, never from input).
CREATE OR REPLACE TEMP TABLE raw_reports AS
SELECT filename, {{projection}}
FROM read_parquet({{files}}, union_by_name = true, filename = true, hive_partitioning = false);
