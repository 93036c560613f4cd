-- Rows of each file, from the files' footers (no data page is read): the rows a state read.
-- Placeholders: <files> the batch's files (a list of quoted paths, spliced: DuckDB resolves file
-- lists when it prepares). Parameters: none.
-- Reads: the files' footers. Writes: nothing (a query: one row per file, its path as given).
SELECT file_name AS filename, CAST(num_rows AS BIGINT) AS n FROM parquet_file_metadata({{files}})
