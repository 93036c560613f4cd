-- The deduplicated reports with ts <= $as_of: one row per reportId, whatever file it landed in
-- (session-report.md). Copies of a report are identical by contract; the copy from the first
-- file by name is kept, so the choice is deterministic even when they are not.
CREATE OR REPLACE TEMP TABLE reports AS
SELECT unnest(kept)
FROM (
  SELECT arg_min(
    {'sessionId': sessionId, 'streamId': streamId, 'ts': ts, 'final': final,
     'bytesOffloaded': bytesOffloaded, 'bytesFallback': bytesFallback, 'peerCount': peerCount,
     'bufferHealth': bufferHealth, 'stallCount': stallCount},
    filename) AS kept
  FROM raw_reports
  WHERE ts <= $as_of
  GROUP BY reportId
);
