-- A partition's files merged into one compacted file (compaction/merge.ts): every row, with where
-- it first landed: `_source_file` the base name of the file it landed in and `_source_row` its
-- row there (a row of a compacted input keeps its own), written in that order. The deduplication
-- rule ranks copies by exactly these (dedup_reports.sql), so the merge changes no kept copy. A row
-- that two inputs both hold (a compacted file read with a file it covers) is written once.
-- <distinct>: `DISTINCT ON (_source_file, _source_row)` when two inputs may hold the same row
-- (compact_overlap.sql), else nothing: each row's key is then its own file's name and row.
-- <files>: the files to merge (spliced: DuckDB resolves file lists when it prepares).
-- <provenance>, <projection>: as in load_raw.sql; <projection> over the report columns that the
-- files have, and only those (the partition's present columns stay what they were).
-- <target>: the file to write (spliced: COPY's target is a literal). Parameters: none.
-- Reads: <files>. Writes: <target>.
COPY (
  SELECT {{distinct}} *
  FROM (
    SELECT landed.* EXCLUDE (filename, file_row_number, _source_file, _source_row),
           coalesce(landed._source_file, regexp_extract(landed.filename, '[^/]*$')) AS _source_file,
           coalesce(landed._source_row, landed.file_row_number) AS _source_row
    FROM (
      SELECT filename, file_row_number, {{provenance}}, {{projection}}
      FROM read_parquet({{files}}, union_by_name = true, filename = true, file_row_number = true, hive_partitioning = false)
    ) AS landed
  )
  ORDER BY _source_file, _source_row
) TO {{target}} (FORMAT parquet, COMPRESSION snappy);
