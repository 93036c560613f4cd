-- A layered state's coarse sums (layer_coarse_sums.sql) after a new layer, from the previous
-- state's: the buckets the new reports touch (`touched_coarse`) gain what their sessions
-- (`touched_sessions`) bring. For each of those sessions in those buckets, its bucket before (the
-- previous state's layers: those kept, and those merged into the new layer) and after (the kept
-- layers and the new layer) are added up from the layers' per-session buckets; a bucket's sums
-- change by the difference of the two (a session seen for the first time adds one session; a
-- session seen before replaces its mean peerCount by its new one). The read of the earlier layers
-- is a filter on those sessions' keys, not a regrouping of the day's sessions. Exact: counts and
-- DECIMAL sums.
-- Placeholders: <previous> the previous state's coarse sums (a query); <kept>, <merged> the
-- per-session buckets of the layers kept and merged (queries, filtered to the touched buckets'
-- span); <coarse_sums_of_before>, <coarse_sums_of_after> layer_coarse_sums.sql over `before_rows`
-- and `after_rows`; <coarse_update> each sum's previous value plus after minus before
-- (piece-columns.ts). Parameters: none.
-- Reads: layer_sessions, touched_coarse, touched_sessions, <previous>, <kept>, <merged>. Writes: coarse_sums.
CREATE OR REPLACE TEMP TABLE coarse_sums AS
WITH
new_rows AS (
  SELECT s.*
  FROM layer_sessions AS s
  SEMI JOIN touched_coarse AS t USING (bucketSeconds, start_us)
  SEMI JOIN touched_sessions AS k USING (streamId, sessionId)
),
earlier_rows AS (
  SELECT e.*
  FROM (
    SELECT true AS kept, * FROM ({{kept}})
    UNION ALL BY NAME
    SELECT false AS kept, * FROM ({{merged}})
  ) AS e
  SEMI JOIN new_rows AS n USING (bucketSeconds, streamId, sessionId, start_us)
),
before_rows AS (
  SELECT * EXCLUDE (kept) FROM earlier_rows
),
after_rows AS (
  SELECT * EXCLUDE (kept) FROM earlier_rows WHERE kept
  UNION ALL BY NAME
  SELECT * FROM new_rows
),
before_sums AS (
{{coarse_sums_of_before}}
),
after_sums AS (
{{coarse_sums_of_after}}
)
SELECT
  coalesce(p.bucketSeconds, a.bucketSeconds) AS bucketSeconds,
  coalesce(p.streamId, a.streamId) AS streamId,
  coalesce(p.start_us, a.start_us) AS start_us,
  {{coarse_update}}
FROM ({{previous}}) AS p
FULL JOIN after_sums AS a ON p.bucketSeconds = a.bucketSeconds AND p.streamId = a.streamId AND p.start_us = a.start_us
LEFT JOIN before_sums AS b ON a.bucketSeconds = b.bucketSeconds AND a.streamId = b.streamId AND a.start_us = b.start_us
