-- One stream's (or every stream's) non-empty buckets of one standard size, read back from a
-- snapshot's series files (the glob of the layout contract: every file under
-- stream_timeseries/customer=<id>/, at any depth). Files are sorted by stream, size and time, so
-- the filters on streamId, bucketSeconds and bucketStart prune all but a few row groups.
-- {{files}}: the glob, spliced (paths are resolved when the statement is prepared); values bound:
-- $bucket_seconds, $stream (NULL: every stream), $from_us and $to_us (bucket starts, µs, inclusive).
SELECT streamId, epoch_ms(bucketStart) AS startMs, sessions, bytesOffloaded, bytesFallback, offloadRatio,
       avgPeerCount, avgBufferHealth, rebufferEvents
FROM read_parquet({{files}}, hive_partitioning = false)
WHERE bucketSeconds = $bucket_seconds
  AND {{stream_filter}}
  AND bucketStart BETWEEN make_timestamp(CAST($from_us AS BIGINT)) AND make_timestamp(CAST($to_us AS BIGINT))
ORDER BY streamId, bucketStart
