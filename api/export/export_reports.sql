-- One stream's export (docs/api.md, "Export"): its deduplicated session reports with ts in
-- the window, every column of docs/sdk-ingest.md, in time order. Deduplication is the one rule of
-- dedup_reports.sql; its aggregate and anti-join spill to disk past DuckDB's memory limit, so a
-- server's memory stays bounded whatever the size of the export.
-- <files>, <provenance>, <projection>: as in stream_reports.sql. Parameters: $stream_id, $as_of, $lower
-- (NULL for the `all` window), and the time slice read by this query, [$from, $until) (the API
-- exports a few hours at a time: every copy of a report has the same ts, so deduplication within
-- a slice is exact, and the sort's memory follows the slice).
WITH dedup_input AS (
  SELECT filename, file_row_number, {{provenance}}, {{projection}}
  FROM read_parquet({{files}}, union_by_name = true, filename = true, file_row_number = true, hive_partitioning = false)
  WHERE streamId = $stream_id AND ts <= $as_of AND ($lower IS NULL OR ts > $lower)
    AND ts >= $from AND ts < $until
),
{{@dedup_reports}}
SELECT dedup_input.* EXCLUDE (filename, file_row_number, _source_file, _source_row)
FROM dedup_input ANTI JOIN dedup_dropped USING (filename, file_row_number)
ORDER BY ts, reportId
