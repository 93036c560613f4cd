-- One stream's export (api-decisions.md, "Export"): its deduplicated session reports with ts in
-- the window, every column of session-report.md, in time order.
-- <files>, <projection>: as in stream_reports.sql. Parameters: $stream_id, $as_of, $lower
-- (NULL for the `all` window).
SELECT * EXCLUDE (filename)
FROM (
  SELECT filename, {{projection}}
  FROM read_parquet({{files}}, union_by_name = true, filename = true, hive_partitioning = false)
  WHERE streamId = $stream_id
)
WHERE ts <= $as_of AND ($lower IS NULL OR ts > $lower)
QUALIFY row_number() OVER (PARTITION BY reportId ORDER BY filename) = 1
ORDER BY ts, reportId
