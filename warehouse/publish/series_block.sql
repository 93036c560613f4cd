-- The series of a block of a customer's past days as one file, sorted by stream, size and time
-- like a day's (series-blocks.ts). hive_partitioning off: the state folders' customer= and date=
-- are not columns of a series.
-- Placeholders: <files> the days' states' series.parquet files (quoted paths, spliced).
-- Parameters: none.
-- Reads: <files>. Writes: nothing (a query, copied to the block's file).
SELECT * FROM read_parquet({{files}}, hive_partitioning = false) ORDER BY streamId, bucketSeconds, bucketStart
