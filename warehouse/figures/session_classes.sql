-- Each session's part of each window class at asOf (window_class.sql), for breakdowns by session
-- dimension (breakdown_parts.sql): per (stream, session, class), the session's dimensions at its
-- earliest report of that class (docs/metrics.md: by ts, then seq; pieces are grouped by
-- dimension and keep their earliest report, first_report) and its pieces combined. A window of
-- class w is the union of classes 1..w, and its earliest report is the earliest of theirs, so a
-- breakdown of any window combines these rows without the pieces.
-- Placeholders: <pieces> pieces with the session dimensions and lo_us (window_pieces.sql, or
-- report_pieces.sql over reports up to asOf); <head_fields> first_report and the dimensions as
-- struct fields; <head_columns> the dimensions out of `head`; <piece_sums> every piece column
-- combined at its own type (breakdowns.ts, piece-columns.ts).
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[4]).
-- Reads: <pieces>. Writes: nothing (a query: customer, streamId, sessionId, class, the
-- dimensions, the piece columns; in no order).
SELECT split_part(streamId, ':', 1) AS customer, streamId, sessionId, class, {{head_columns}}, * EXCLUDE (streamId, sessionId, class, head)
FROM (
  SELECT
    streamId, sessionId, class,
    min(struct_pack({{head_fields}})) AS head,
    {{piece_sums}}
  FROM (SELECT *, {{@window_class}} AS class FROM {{pieces}})
  GROUP BY streamId, sessionId, class
)
