-- The deduplicated reports with ts <= $as_of: one row per reportId, whatever file it landed in
-- (session-report.md), with every column `raw_reports` was loaded with. Copies of a report are
-- identical by contract; the copy from the first file by name is kept, so the choice is
-- deterministic even when they are not.
CREATE OR REPLACE TEMP TABLE reports AS
SELECT unnest(kept)
FROM (
  SELECT arg_min(r, r.filename) AS kept
  FROM raw_reports AS r
  WHERE r.ts <= $as_of
  GROUP BY r.reportId
);
