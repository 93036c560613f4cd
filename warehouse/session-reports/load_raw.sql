-- One batch of landed files as `raw_reports`, the rollup's columns only, with the file and row
-- each row came from and its provenance (the deduplication rule ranks copies by them).
-- <kind>: TABLE (materialised) or VIEW (read where used: a state build streams its files once).
-- <files>: the partition's files (spliced: DuckDB resolves file lists when it prepares).
-- <projection>: each column cast to its docs/sdk-ingest.md type, or its default when no file
-- has it (report-columns.ts builds it from the column catalog, never from input).
-- <provenance>: _source_file and _source_row the same way (report-projection.ts provenanceSql).
-- <where>: a filter built by code from constants (`true` for a whole batch).
CREATE OR REPLACE TEMP {{kind}} raw_reports AS
SELECT filename, file_row_number, {{provenance}}, {{projection}}
FROM read_parquet({{files}}, union_by_name = true, filename = true, file_row_number = true, hive_partitioning = false)
WHERE {{where}};
