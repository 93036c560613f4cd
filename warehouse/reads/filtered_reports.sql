-- The reports of <source> from $from on whose sessions the filters keep (a filtered series,
-- docs/api.md "Breakdown" filters): a session's value of each dimension is that of its
-- earliest report from $from on (the least head: first report by ts then seq, then the dimensions,
-- which only break ties, as in breakdown_parts.sql), and the filters keep or drop whole sessions by
-- those values, with the breakdown's own conditions.
-- Placeholders: <source> deduplicated reports (a table name: code constants); <report_head_fields>
-- one report's head (breakdowns.ts); <head_columns> and <dimension_filters> (breakdowns.ts, the
-- filters' conditions over their $keep_<dim> and $drop_<dim>).
-- Parameters: $from (TIMESTAMP, the series' first bucket start), $keep_<dim> and $drop_<dim>
-- (VARCHAR[], with that dimension's filters only).
-- Reads: <source>. Writes: nothing (a query: the kept reports, every column of <source>).
WITH heads AS (
  SELECT streamId, sessionId, min(struct_pack({{report_head_fields}})) AS head
  FROM {{source}}
  WHERE ts >= $from
  GROUP BY streamId, sessionId
),
kept AS (
  SELECT streamId, sessionId
  FROM (SELECT streamId, sessionId, {{head_columns}} FROM heads)
  WHERE {{dimension_filters}}
)
SELECT r.*
FROM {{source}} r
SEMI JOIN kept k ON r.streamId = k.streamId AND r.sessionId = k.sessionId
WHERE r.ts >= $from
