-- The quality figures of every stream in every window, as the snapshot's stream_quality.parquet
-- keeps them for GET /telemetry/metrics/:streamId (unfiltered): the stream summaries' own
-- (stream_summaries.sql, by breakdown_rows.sql's definitions).
-- Placeholders: none. Parameters: none.
-- Reads: summaries (window_summaries.sql). Writes: nothing (a query, copied to the file).
SELECT windowName, streamId, rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess
FROM summaries
ORDER BY windowName, streamId
