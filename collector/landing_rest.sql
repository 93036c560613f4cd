-- The rows of a segment's partition that an earlier landing of the same segment, cut short by a
-- crash, did not place: written to <target> as one Parquet file (none when nothing is missing).
-- Used by the collector's flusher (collector/flusher.ts) when a partition folder already holds
-- some files of the segment it lands; rows are matched by reportId.
-- <written>: this landing's files of the partition; <landed>: the files already in place.
-- <target>: the file to write (spliced: COPY's target is a literal).
COPY (
  SELECT w.*
  FROM read_parquet({{written}}, hive_partitioning = false) AS w
  WHERE w.reportId NOT IN (SELECT reportId FROM read_parquet({{landed}}, hive_partitioning = false))
) TO {{target}} (FORMAT parquet);
