-- The minute pieces, over every layer of a partition state, of the minutes a new layer's reports
-- touch (`touched_blocks`: blocks of one minute) from <lo> to <hi>, one row per (stream, session,
-- minute): the minute buckets of the series are remade from them (layered-state.ts). A layer that
-- touches many minutes of a busy day runs this once per run of its touched minutes, each run a
-- bounded number of rows (touchedMinuteChunks), so that its grouping fits the process's memory.
-- Placeholders: <into> `CREATE OR REPLACE TEMP TABLE state_minutes AS` or `INSERT INTO
-- state_minutes`; <kept> the minute files of the layers kept from the previous state (a query,
-- filtered to the chunk's span so that sorted files skip other row groups); <series_piece_sums>
-- (piece-columns.ts); <lo>, <hi> the chunk's first and last block (epoch µs, code values).
-- Parameters: none.
-- Reads: layer_minutes, touched_blocks, <kept>. Writes: state_minutes.
{{into}}
SELECT streamId, sessionId, start_us, {{series_piece_sums}}
FROM (SELECT * FROM layer_minutes UNION ALL BY NAME {{kept}})
WHERE start_us // 60000000 * 60000000 IN (SELECT block_us FROM touched_blocks WHERE block_us BETWEEN {{lo}} AND {{hi}})
GROUP BY ALL;
