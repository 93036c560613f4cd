-- Whether two of a merge's files (compaction/merge.ts) hold the same landed row: the source files
-- (the file a row first landed in: `_source_file` in a compacted file, the file's own name
-- otherwise) that rows of more than one input come from. Reads one column; a group per source file.
-- <files>: the files to merge (spliced). Parameters: none.
-- Reads: <files>. Writes: nothing (a query: n, the source files shared by two inputs or more).
SELECT count(*) AS n
FROM (
  SELECT coalesce(_source_file, regexp_extract(filename, '[^/]*$')) AS source
  FROM read_parquet({{files}}, union_by_name = true, filename = true, hive_partitioning = false)
  GROUP BY source
  HAVING count(DISTINCT filename) > 1
)
