-- The day's series of a layered state after a new layer, remade only where the new layer's
-- reports fall (layered-state.ts): the minute buckets they touch (from every layer's minute pieces
-- of those minutes: `state_series`), the 5-minute, 10-minute, hour, 6-hour and day buckets they
-- touch (`coarse_rows`, layer_coarse_series.sql), and every other bucket as the
-- previous state's series file has it.
-- Placeholders: <previous> the previous state's series file (a quoted path). Parameters: none.
-- Reads: touched_blocks, touched_coarse, state_series, coarse_rows, <previous>.
-- Writes: state_series_all (the new series, unsorted).
CREATE OR REPLACE TEMP TABLE state_series_all AS
WITH previous AS (
  SELECT p.* FROM read_parquet({{previous}}, hive_partitioning = false) AS p
  ANTI JOIN touched_coarse AS t ON p.bucketSeconds = t.bucketSeconds AND epoch_us(p.bucketStart) = t.start_us
  WHERE NOT (p.bucketSeconds <= 60 AND epoch_us(p.bucketStart) // 60000000 * 60000000 IN (SELECT block_us FROM touched_blocks))
)
SELECT * EXCLUDE (customer, date) FROM state_series
UNION ALL BY NAME SELECT * FROM coarse_rows
UNION ALL BY NAME SELECT * FROM previous;
