-- Whether a 64-bit hash of (stream, session) tells every session of a batch from every other:
-- true when the batch's distinct (streamId, sessionId) pairs, read from its hour pieces (every
-- report's session has a piece there; 163 K rows for 5.4 M reports), have as many distinct
-- hashes as there are pairs. Only then are the minute pieces keyed by the hash
-- (state_minutes.sql): a collision would merge two sessions' minutes, so it falls back to the
-- strings.
-- Placeholders: none. Parameters: none.
-- Reads: state_hours (state_pieces.sql). Writes: nothing (a query: one row, `exact`).
SELECT count(*) = count(DISTINCT hash(streamId, sessionId)) AS exact
FROM (SELECT DISTINCT streamId, sessionId FROM state_hours);
