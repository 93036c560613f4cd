-- The series rows (series_of_buckets.sql's columns and figures) of the coarse buckets a new layer
-- touches (`touched_coarse`), or of every coarse bucket (a state of one layer), from the state's coarse sums (layer_coarse_sums.sql,
-- layer_coarse_delta.sql): the same definitions over the partial sums, so the same figures to the
-- last digit as a regrouping of the buckets' sessions.
-- Placeholders: <partial_series_figures> (piece-columns.ts); <touched> the semi join on
-- `touched_coarse`, or nothing (every bucket). Parameters: none.
-- Reads: coarse_sums, touched_coarse (with <touched>). Writes: coarse_rows.
CREATE OR REPLACE TEMP TABLE coarse_rows AS
SELECT
  bucketSeconds,
  streamId,
  make_timestamp(start_us) AS bucketStart,
  sessions,
  {{partial_series_figures}},
  CAST(stalls AS BIGINT) AS rebufferEvents,
  CAST(reports AS BIGINT) AS reports
FROM coarse_sums AS c
{{touched}}
