-- A cheap first look at every file, before validate_rows.sql counts anything: per column, a few
-- aggregates that only a file holding a bad row can fail (min and max against the column's bounds,
-- where NaN sorts above everything; null counts; the ts range against the folder's date; stream
-- ids of the folder's customer). Only the files it flags are counted rule by rule.
-- <files>: the files to check (spliced). <screens>: one `coalesce(<aggregate test>, false)` per
-- column, joined with OR, generated from the column catalog by validate-rows.ts.
-- Parameter: $stream_id_regex (a file's customer and date come from its folder, in `filename`).
SELECT filename, {{screens}} AS suspect
FROM read_parquet({{files}}, union_by_name = true, filename = true, hive_partitioning = false)
GROUP BY filename;
