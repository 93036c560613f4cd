-- Rows that break docs/sdk-ingest.md, counted per file, read straight from the landed files
-- before anything casts them (a cast of NaN, ±Infinity or an out-of-range value aborts a whole
-- statement). A file with any of them is quarantined whole.
-- <files>: the files to check (spliced: DuckDB resolves file lists when it prepares).
-- <row_checks>: one `count_if(<rule broken>) AS rN` per (column, rule), generated from the column
-- catalog by validate-rows.ts for the types the files store; <row_sums>: `sum(rN) AS rN` for each.
-- Rows are first grouped by (file, streamId, UTC day), so the stream id rules run once per group.
-- <folder_customer>: the customer of a file's folder, from `filename`. Parameter: $stream_id_regex.
WITH per_key AS (
  SELECT
    filename,
    streamId,
    CAST(CAST(ts AS TIMESTAMP) AS DATE) AS day,
    count(*) AS n,
    {{row_checks}}
  FROM read_parquet({{files}}, union_by_name = true, filename = true, hive_partitioning = false)
  GROUP BY filename, streamId, day
)
SELECT
  filename,
  sum(n) AS rows,
  {{row_sums}},
  coalesce(sum(n) FILTER (WHERE NOT regexp_full_match(streamId, $stream_id_regex)), 0) AS malformed_stream_ids,
  coalesce(sum(n) FILTER (WHERE regexp_full_match(streamId, $stream_id_regex)
                             AND split_part(streamId, ':', 1) <> {{folder_customer}}), 0) AS foreign_customer,
  coalesce(sum(n) FILTER (WHERE isfinite(day)
                             AND day <> CAST(regexp_extract(filename, 'date=(\d{4}-\d{2}-\d{2})', 1) AS DATE)), 0) AS foreign_date
FROM per_key
GROUP BY filename;
