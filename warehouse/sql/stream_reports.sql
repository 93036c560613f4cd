-- One stream's landed reports into `raw_reports`, for work done on demand (a series of an unusual
-- bucket size, a pilot report): the same columns and casts as load_raw.sql, then dedup_raw.sql
-- and the shared figure SQL run over them unchanged.
-- <files>: the customer partition's files of the snapshot; <projection>: as in load_raw.sql.
-- Parameter: $stream_id (NULL: every stream of the files).
CREATE OR REPLACE TEMP TABLE raw_reports AS
SELECT filename, file_row_number, {{projection}}
FROM read_parquet({{files}}, union_by_name = true, filename = true, file_row_number = true, hive_partitioning = false)
WHERE $stream_id IS NULL OR streamId = $stream_id;
