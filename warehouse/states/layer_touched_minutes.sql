-- The minute pieces, over every layer of a partition state, of the minutes a new layer's reports
-- touch (`touched_blocks`: blocks of one minute), one row per (stream, session, minute): the
-- minute buckets of the series are remade from them (layered-state.ts); `touched_coarse` the
-- buckets of the larger sizes (5 and 10 minutes, an hour, 6 hours, a day) those minutes lie in, remade from the layers' per-session buckets (layer_coarse_series.sql).
-- Placeholders: <kept> the minute files of the layers kept from the previous state (a query,
-- filtered to the touched blocks' span so that sorted files skip other row groups);
-- <coarse_sizes> the larger sizes in seconds (code constants); <series_piece_sums>
-- (piece-columns.ts). Parameters: none.
-- Reads: layer_minutes, touched_blocks, <kept>. Writes: state_minutes, touched_coarse.
CREATE OR REPLACE TEMP TABLE state_minutes AS
SELECT streamId, sessionId, start_us, {{series_piece_sums}}
FROM (SELECT * FROM layer_minutes UNION ALL BY NAME {{kept}})
WHERE start_us // 60000000 * 60000000 IN (SELECT block_us FROM touched_blocks)
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE touched_coarse AS
SELECT DISTINCT CAST(z.size AS INTEGER) AS bucketSeconds, block_us // (CAST(z.size AS BIGINT) * 1000000) * (CAST(z.size AS BIGINT) * 1000000) AS start_us
FROM touched_blocks CROSS JOIN (SELECT unnest([{{coarse_sizes}}]) AS size) AS z;
