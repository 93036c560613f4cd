-- Copies, in the earlier layers of a partition state, of the reports of a new layer: found by
-- the hash of reportId (the only column read for every row of the earlier layers in the span of
-- the new reports' hours: every copy of a report has its ts, and the layers' report files are
-- sorted by ts, so the rest of the day is skipped), confirmed on reportId. `outranking` counts the new copies that the one rule (dedup_reports.sql) would keep
-- instead of the earlier one: the state cannot then be appended to (layered-state.ts rebuilds it).
-- Placeholders: <prior> the earlier layers' report files (a list of quoted paths, spliced);
-- <lo> and <hi> the span of the new reports' hours, as TIMESTAMP literals (code-computed).
-- Parameters: none.
-- Reads: layer_rows (layer_new_reports.sql), <prior>. Writes: layer_prior (table: reportId and
-- rank of each earlier copy).
CREATE OR REPLACE TEMP TABLE layer_prior AS
SELECT reportId, rank_name, rank_row
FROM read_parquet({{prior}}, hive_partitioning = false)
WHERE ts >= {{lo}} AND ts < {{hi}} AND h IN (SELECT h FROM layer_rows);
SELECT
  count(*) AS copies,
  count(*) FILTER (WHERE n.rank_name < p.rank_name OR (n.rank_name = p.rank_name AND n.rank_row < p.rank_row)) AS outranking
FROM layer_rows AS n JOIN layer_prior AS p USING (reportId);
