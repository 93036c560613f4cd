-- The quality figures of every stream in one window (breakdown_rows.sql per stream, no dimension,
-- no filter): what GET /telemetry/metrics/:streamId adds to a stream's summary when it is not
-- filtered, computed by the one definition of breakdowns.
-- Placeholders: <into> `CREATE OR REPLACE TEMP TABLE stream_quality AS` for the first window,
-- `INSERT INTO stream_quality` for the others; those of breakdown_rows.sql, <classes>
-- session_classes.
-- Parameters: $window_name (VARCHAR) and those of breakdown_rows.sql ($per_stream true).
-- Reads: session_classes. Writes: stream_quality.
{{into}}
SELECT CAST($window_name AS VARCHAR) AS windowName, streamId, rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess
FROM (
{{@breakdown_rows}}
)
