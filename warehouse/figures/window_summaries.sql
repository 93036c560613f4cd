-- The stream summaries of every window at asOf (stream_summaries.sql over the snapshot's session
-- classes) of a run of streams, with the customer of each stream, into `summaries`. A stream's
-- figures need its own rows only, so the snapshot's summaries are made a run of streams at a time
-- (snapshot-summaries.ts): the statement's memory (it holds the session classes it reads) is that
-- of a run's rows, not of the whole snapshot's.
-- Placeholders: those of stream_summaries.sql, <classed> the run's session classes (a filter of
-- session_classes by customer and streamId range); <into> `CREATE OR REPLACE TEMP TABLE summaries
-- AS` for the first run, `INSERT INTO summaries` for the others.
-- Parameters: those of stream_summaries.sql ($as_of, $window_names, $horizon_seconds).
-- Reads: session_classes (session_classes_view.sql). Writes: summaries.
{{into}}
SELECT *, split_part(streamId, ':', 1) AS customer FROM (
{{@stream_summaries}}
)
