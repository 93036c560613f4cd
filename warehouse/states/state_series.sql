-- A batch's series sorted as each state's file is (stream, size, time), by partition first: each
-- partition's rows are then one contiguous run that its COPY reads in order, with no sort of its
-- own (partition_rows.sql). `customer` and `date` name the partition (not stored in the file).
-- Placeholders: none. Parameters: none.
-- Reads: series_rows (series_rows.sql). Writes: state_series; drops series_rows.
CREATE OR REPLACE TEMP TABLE state_series AS
SELECT split_part(streamId, ':', 1) AS customer, CAST(bucketStart AS DATE) AS date, *
FROM series_rows ORDER BY customer, date, streamId, bucketSeconds, bucketStart;
DROP TABLE series_rows;
