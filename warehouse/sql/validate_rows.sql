-- Rows of `raw_reports` that break session-report.md, counted per file: null ids or times,
-- malformed stream ids, rows of another customer or of another UTC date than the file's
-- partition folder, and negative counters. A file with any of them is quarantined whole.
-- Parameters: $customer, $stream_id_regex.
WITH per_key AS (
  SELECT
    filename,
    streamId,
    CAST(ts AS DATE) AS day,
    count(*) AS n,
    count(*) FILTER (WHERE reportId IS NULL OR sessionId IS NULL) AS null_ids,
    count(*) FILTER (WHERE bytesOffloaded < 0 OR bytesFallback < 0 OR stallCount < 0
                        OR peerCount < 0 OR bufferHealth < 0) AS negative
  FROM raw_reports
  GROUP BY ALL
)
SELECT
  filename,
  sum(n) AS rows,
  sum(null_ids) + coalesce(sum(n) FILTER (WHERE streamId IS NULL OR day IS NULL), 0) AS null_required,
  coalesce(sum(n) FILTER (WHERE NOT regexp_full_match(streamId, $stream_id_regex)), 0) AS malformed_stream_ids,
  coalesce(sum(n) FILTER (WHERE regexp_full_match(streamId, $stream_id_regex)
                             AND split_part(streamId, ':', 1) <> $customer), 0) AS foreign_customer,
  coalesce(sum(n) FILTER (WHERE day <> CAST(regexp_extract(filename, 'date=(\d{4}-\d{2}-\d{2})', 1) AS DATE)), 0) AS foreign_date,
  sum(negative) AS negative_counters
FROM per_key
GROUP BY filename;
