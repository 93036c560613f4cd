-- The buckets of the larger sizes (5 and 10 minutes, an hour, 6 hours, a day) that the minutes a
-- new layer's reports touch (`touched_blocks`: blocks of one minute) lie in: remade from the
-- layers' per-session buckets (layer_coarse_series.sql, layered-state.ts).
-- Placeholders: <coarse_sizes> the larger sizes in seconds (code constants). Parameters: none.
-- Reads: touched_blocks. Writes: touched_coarse.
CREATE OR REPLACE TEMP TABLE touched_coarse AS
SELECT DISTINCT CAST(z.size AS INTEGER) AS bucketSeconds, block_us // (CAST(z.size AS BIGINT) * 1000000) * (CAST(z.size AS BIGINT) * 1000000) AS start_us
FROM touched_blocks CROSS JOIN (SELECT unnest([{{coarse_sizes}}]) AS size) AS z;
