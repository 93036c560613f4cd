-- Start (epoch ms) of one stream's first non-empty bucket of one size in a snapshot's series files
-- (NULL when it has none): where the `all` window of a series begins.
-- {{files}} a list of the customer's series files (quoted paths) and {{stream}} the stream id, spliced as quoted literals so
-- that the filter prunes row groups; $bucket_seconds bound.
SELECT epoch_ms(min(bucketStart)) AS first
FROM read_parquet({{files}}, hive_partitioning = false)
WHERE streamId = {{stream}} AND bucketSeconds = $bucket_seconds
