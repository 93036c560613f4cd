-- One stream's export (api-decisions.md, "Export"): its deduplicated session reports with ts in
-- the window, every column of session-report.md, in time order.
-- Deduplication keeps the first copy by (file name, row): the copies to drop are found with an
-- aggregate over reportId and an anti-join, both of which DuckDB spills to disk past its memory
-- limit (a window function over every row would not), so that a server's memory stays bounded
-- whatever the size of the export.
-- <files>, <projection>: as in stream_reports.sql. Parameters: $stream_id, $as_of, $lower
-- (NULL for the `all` window).
WITH rows AS (
  SELECT filename, file_row_number, {{projection}}
  FROM read_parquet({{files}}, union_by_name = true, filename = true, file_row_number = true, hive_partitioning = false)
  WHERE streamId = $stream_id AND ts <= $as_of AND ($lower IS NULL OR ts > $lower)
),
kept_copy AS (
  SELECT reportId, min({'f': filename, 'r': file_row_number}) AS k
  FROM rows
  GROUP BY reportId
  HAVING count(*) > 1
)
SELECT rows.* EXCLUDE (filename, file_row_number)
FROM rows
LEFT JOIN kept_copy USING (reportId)
WHERE kept_copy.k IS NULL OR kept_copy.k = {'f': rows.filename, 'r': rows.file_row_number}
ORDER BY ts, reportId
