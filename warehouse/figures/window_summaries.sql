-- The stream summaries of every window at asOf (stream_summaries.sql over the snapshot's session
-- classes), with the customer of each stream.
-- Placeholders: those of stream_summaries.sql, <classed> session_classes.
-- Parameters: those of stream_summaries.sql ($as_of, $window_names, $horizon_seconds).
-- Reads: session_classes (snapshot_session_classes.sql). Writes: summaries.
CREATE OR REPLACE TEMP TABLE summaries AS
SELECT *, split_part(streamId, ':', 1) AS customer FROM (
{{@stream_summaries}}
)
