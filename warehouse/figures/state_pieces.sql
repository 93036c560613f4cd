-- A partition state's pieces, from the deduplicated `reports` of one batch of partitions, each
-- read straight from the files:
-- `state_hours` (stored in the state): per (date, stream, session, hour), the partial sums of
--   every figure (docs/metrics.md) and the session's latest report times. The first instant of
--   an hour is a piece of its own (at_start), so that any window (asOf - w, asOf] whose edges fall
--   on hour boundaries is an exact union of hour pieces (a window edge inside an hour is made
--   exact from that hour's raw reports, window-pieces.ts). Pieces are also grouped by the
--   session's dimensions (cohort, device, region, contentType, sdkVersion, signalingVersion:
--   constant within a session in practice, so they add no rows), so that breakdowns by dimension
--   can be answered from states without reading raw reports. `customer` and `date` name the
--   partition (they are not stored in the state's file).
-- `state_minutes` (for this batch only) is made after it (state_minutes.sql).
-- Integer sums are cast to BIGINT (Parquet keeps them exactly; HUGEINT would become DOUBLE).
-- Placeholders: <piece_dimensions> the session dimensions; <piece_of_reports> every piece
-- column's value for a group of reports (piece-columns.ts).
-- Parameters: none.
-- Reads: reports (dedup_batch.sql). Writes: state_hours.
CREATE OR REPLACE TEMP TABLE state_hours AS
SELECT
  split_part(streamId, ':', 1) AS customer,
  CAST(ts AS DATE) AS date,
  3600 AS grain,
  epoch_us(ts) // 3600000000 * 3600000000 AS start_us,
  epoch_us(ts) % 3600000000 = 0 AS at_start,
  streamId,
  sessionId,
  {{piece_dimensions}},
  {{piece_of_reports}}
FROM reports
GROUP BY ALL;
