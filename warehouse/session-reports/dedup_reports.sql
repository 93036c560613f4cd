-- The one deduplication rule (docs/sdk-ingest.md: a duplicate counts once, whatever file it lands
-- in): of the copies of a reportId, the one at the first (filename, file_row_number) is kept, so
-- the choice is deterministic even for two copies in one file. Rollups, on-demand figures,
-- exports and the analyst catalog all include this text (sql-files.ts sqlFile: an at-sign
-- placeholder).
-- A row of a compacted file is ranked where it first landed: its file name is the compacted
-- file's folder with `_source_file` (that file's base name), its row `_source_row`
-- (report-columns.ts PROVENANCE_COLUMNS; null in a file as landed). Compacting files therefore
-- changes no kept copy, and a compacted file seen with a file it covers (a crash between placing
-- one and hiding the other) ties each row with its own copy: identical rows, one kept.
-- Only reportId is grouped over every row; the few duplicate copies are ranked alone and the
-- dropped ones anti-joined, which DuckDB spills to disk past its memory limit (arg_min over
-- whole rows, or a window over every row, cost many times a scan).
-- Used after `WITH dedup_input AS (...),` (a relation with reportId, filename, file_row_number,
-- _source_file and _source_row); the caller then reads
--   SELECT ... FROM dedup_input ANTI JOIN dedup_dropped USING (filename, file_row_number)
-- The copies are found by a hash of reportId first (grouping 64-bit integers costs about half of
-- grouping the strings), then confirmed on reportId itself among the few rows whose hash repeats,
-- so a hash collision never drops a report.
dedup_suspects AS (
  SELECT hash(reportId) AS h FROM dedup_input GROUP BY h HAVING count(*) > 1
),
dedup_copies AS (
  SELECT reportId FROM dedup_input WHERE hash(reportId) IN (SELECT h FROM dedup_suspects)
  GROUP BY reportId HAVING count(*) > 1
),
dedup_dropped AS (
  SELECT filename, file_row_number
  FROM (
    SELECT d.filename, d.file_row_number,
           row_number() OVER (
             PARTITION BY d.reportId
             ORDER BY CASE WHEN d._source_file IS NULL THEN d.filename ELSE regexp_replace(d.filename, '[^/]*$', '') || d._source_file END,
                      coalesce(d._source_row, d.file_row_number)
           ) AS copy
    FROM dedup_input AS d SEMI JOIN dedup_copies USING (reportId)
  )
  WHERE copy > 1
)
