-- Start (epoch ms) of each listed stream's first minute bucket in a snapshot's series files:
-- where the `all` window of its series begins, at every standard size (the first non-empty bucket
-- of a size is the one holding the stream's first minute; every size is a whole number of
-- minutes aligned on the epoch). Streams with no minute bucket in the files are absent.
-- {{files}} a list of the customer's series files (quoted paths); {{streams}} a list of quoted
-- stream ids, spliced so that the filter reaches the scan.
SELECT streamId, epoch_ms(min(bucketStart)) AS first
FROM read_parquet({{files}}, hive_partitioning = false)
WHERE bucketSeconds = 60 AND streamId IN {{streams}}
GROUP BY streamId
