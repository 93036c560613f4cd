-- One stream's landed reports as `raw_reports`, for work done on demand (a series of an unusual
-- bucket size, a pilot report): the same columns and casts as load_raw.sql, then dedup-raw.ts
-- and the shared figure SQL run over them unchanged. A view: the files are read once, into
-- `reports`, which is deduplicated in place, so the stream's reports are held once, not twice.
-- <files>: the customer partition's files of the snapshot; <provenance>, <projection>: as in load_raw.sql;
-- <stream_filter>: `streamId = '<id>'` (a quoted literal: a view takes no parameters) or true, and
-- for a short window's recent reports a condition on ts (stream-session-reports.ts tsAfter).
CREATE OR REPLACE TEMP VIEW raw_reports AS
SELECT filename, file_row_number, {{provenance}}, {{projection}}
FROM read_parquet({{files}}, union_by_name = true, filename = true, file_row_number = true, hive_partitioning = false)
WHERE {{stream_filter}};
