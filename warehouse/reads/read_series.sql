-- One stream's (or every stream's) non-empty buckets of one standard size, read back from a
-- snapshot's series files (those of the days the range meets, series-read.ts seriesFilesIn; the
-- layout contract: every file under
-- stream_timeseries/customer=<id>/, at any depth). Files are sorted by stream, size and time, so
-- the filters on streamId, bucketSeconds and bucketStart prune all but a few row groups.
-- Figures come out as DOUBLE: JS numbers without a BigInt per value (several times cheaper to
-- hand to JS); an integer beyond 2^53, which a double would round, fails the read instead.
-- <files>: a list of quoted paths, spliced (paths are resolved when the statement is prepared);
-- <stream_filter>: `true` or `streamId = '<quoted id>'`, spliced so that it prunes row groups;
-- <stream_column>: `streamId,` for every stream, empty for one (the caller knows it: no string
-- per bucket to hand to JS).
-- Values bound: $bucket_seconds, $from_us and $to_us (bucket starts, µs since the epoch, inclusive).
SELECT {{stream_column}}
       CAST(epoch_ms(bucketStart) AS DOUBLE) AS startMs,
       CASE WHEN abs(sessions) <= 9007199254740991 THEN CAST(sessions AS DOUBLE) ELSE error('sessions beyond exact double range') END AS sessions,
       CASE WHEN abs(bytesOffloaded) <= 9007199254740991 THEN CAST(bytesOffloaded AS DOUBLE) ELSE error('bytesOffloaded beyond exact double range') END AS bytesOffloaded,
       CASE WHEN abs(bytesFallback) <= 9007199254740991 THEN CAST(bytesFallback AS DOUBLE) ELSE error('bytesFallback beyond exact double range') END AS bytesFallback,
       offloadRatio, avgPeerCount, avgBufferHealth,
       CASE WHEN abs(rebufferEvents) <= 9007199254740991 THEN CAST(rebufferEvents AS DOUBLE) ELSE error('rebufferEvents beyond exact double range') END AS rebufferEvents
FROM read_parquet({{files}}, hive_partitioning = false)
WHERE bucketSeconds = $bucket_seconds
  AND {{stream_filter}}
  AND bucketStart BETWEEN make_timestamp(CAST($from_us AS BIGINT)) AND make_timestamp(CAST($to_us AS BIGINT))
ORDER BY {{stream_column}} bucketStart
