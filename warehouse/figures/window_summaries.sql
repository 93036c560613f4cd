-- The stream summaries of every window at asOf (stream_summaries.sql over the snapshot's session
-- classes) of some customers, with the customer of each stream, into `summaries`. A stream's rows
-- are those of its customer only, so the snapshot's summaries are made a few customers at a time
-- (snapshot-summaries.ts): the statement's memory (it holds its session classes) is that of a
-- group's rows, not of the whole snapshot's.
-- Placeholders: those of stream_summaries.sql; <into> `CREATE OR REPLACE TEMP TABLE summaries AS`
-- for the first group, `INSERT INTO summaries` for the others; <customers> the group's customers,
-- quoted (code: the plan's customer ids).
-- Parameters: those of stream_summaries.sql ($as_of, $window_names, $horizon_seconds).
-- Reads: session_classes (session_classes_view.sql). Writes: summaries.
{{into}}
SELECT *, split_part(streamId, ':', 1) AS customer FROM (
{{@stream_summaries}}
)
