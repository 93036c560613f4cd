-- A customer's hour pieces of many partition states as one file (window-pieces.ts: its days
-- older than the recent ones are read from it), named by which states it holds.
-- Placeholders: <files> the states' hours.parquet files (quoted paths, spliced).
-- Parameters: none.
-- Reads: <files>. Writes: nothing (a query: the hour pieces as the states store them).
SELECT * FROM read_parquet({{files}})
