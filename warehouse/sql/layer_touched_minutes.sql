-- The minute pieces, over every layer of a partition state, of the hours a new layer's reports
-- touch (`touched_hours`), one row per (stream, session, minute): the buckets up to an hour of
-- those hours are remade from them (layered-state.ts); `touched_coarse` the 6-hour and day
-- buckets those hours lie in.
-- Placeholders: <kept> the minute files of the layers kept from the previous state (a query,
-- filtered to the touched hours' span so that sorted files skip other row groups);
-- <series_piece_sums> (piece-columns.ts). Parameters: none.
-- Reads: layer_minutes, touched_hours, <kept>. Writes: state_minutes, touched_coarse.
CREATE OR REPLACE TEMP TABLE state_minutes AS
SELECT streamId, sessionId, start_us, {{series_piece_sums}}
FROM (SELECT * FROM layer_minutes UNION ALL BY NAME {{kept}})
WHERE start_us // 3600000000 * 3600000000 IN (SELECT hour_us FROM touched_hours)
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE touched_coarse AS
SELECT DISTINCT CAST(z.size AS INTEGER) AS bucketSeconds, hour_us // (CAST(z.size AS BIGINT) * 1000000) * (CAST(z.size AS BIGINT) * 1000000) AS start_us
FROM touched_hours CROSS JOIN (SELECT unnest([{{coarse_sizes}}]) AS size) AS z;
