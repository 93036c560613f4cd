-- A batch's minute pieces `state_minutes`: per (stream, session, minute), the sums a series needs
-- (session_buckets.sql's shape), from the deduplicated `reports`; each day's series of every
-- standard size is made of them (partition-state.ts buildSeries). A series counts a bucket's
-- sessions and sums its pieces, so a session only needs a key that tells it from the others of
-- its stream: where the hour pieces show that a 64-bit hash of (stream, session) is distinct
-- for every session of the batch (session_keys_exact.sql), `sessionId` here is that hash
-- (grouping 2.7 M session-minutes by an integer rather than a string costs less), else the
-- string itself. Either way the same groups, so the same series.
-- Placeholders: <minute_session> `sessionId` or `hash(streamId, sessionId) AS sessionId`
-- (partition-state.ts); <series_piece_of_reports> the columns a series needs (piece-columns.ts).
-- Parameters: none.
-- Reads: reports (dedup_batch.sql). Writes: state_minutes.
CREATE OR REPLACE TEMP TABLE state_minutes AS
SELECT
  streamId,
  {{minute_session}},
  epoch_us(ts) // 60000000 * 60000000 AS start_us,
  {{series_piece_of_reports}}
FROM reports
GROUP BY ALL;
