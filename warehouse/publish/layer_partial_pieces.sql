-- The pieces of asOf's date of layered states that hold reports after asOf (series-days.ts):
-- their minute pieces of the minutes wholly at or before asOf, and their report pieces of the
-- minute asOf cuts up to asOf, added to `partial_pieces` (the series need only the series
-- columns; the others are left null).
-- Placeholders: <minutes> and <reports> the layers' files (lists of quoted paths, spliced);
-- <whole_before_us> the start of the first minute not wholly at or before asOf (a BIGINT
-- literal), <whole_before> the same instant and <as_of> asOf, as TIMESTAMP literals;
-- <piece_columns> (piece-columns.ts). Parameters: none.
-- Reads: <minutes>, <reports>. Writes: partial_pieces (rows added).
INSERT INTO partial_pieces BY NAME
SELECT streamId, sessionId, start_us, start_us AS lo_us, * EXCLUDE (streamId, sessionId, start_us)
FROM read_parquet({{minutes}}, hive_partitioning = false)
WHERE start_us < {{whole_before_us}};
INSERT INTO partial_pieces BY NAME
SELECT streamId, sessionId, epoch_us(ts) AS start_us, epoch_us(ts) AS lo_us, {{piece_dimensions}}, {{piece_columns}}
FROM read_parquet({{reports}}, hive_partitioning = false)
WHERE ts >= {{whole_before}} AND ts <= {{as_of}};
