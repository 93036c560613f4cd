-- The new reports of a layered partition state (layered-state.ts), deduplicated among the new
-- files by the one rule (dedup_batch.sql), as report pieces with what a later layer needs to
-- deduplicate against them: the 64-bit hash of reportId (`h`), reportId itself, and the copy's
-- rank under dedup_reports.sql: its file's base name (`_source_file` for a compacted row) and row.
-- Copies of a report lie in one partition folder, so base names rank them as full paths do.
-- Placeholders: <piece_of_report> (piece-columns.ts). Parameters: none.
-- Reads: raw_reports (load_raw.sql over the new files), dedup_dropped (dedup_batch.sql).
-- Writes: layer_rows (table: one row per new deduplicated report).
CREATE OR REPLACE TEMP TABLE layer_rows AS
SELECT
  ts,
  hash(reportId) AS h,
  reportId,
  CASE WHEN _source_file IS NULL THEN regexp_extract(filename, '[^/]*$') ELSE _source_file END AS rank_name,
  coalesce(_source_row, file_row_number) AS rank_row,
  streamId,
  sessionId,
  {{piece_dimensions}},
  {{piece_of_report}}
FROM raw_reports ANTI JOIN dedup_dropped USING (filename, file_row_number);
