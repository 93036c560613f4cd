-- A breakdown's rows (docs/api.md, "Breakdown") from its parts (breakdown_parts.sql: one
-- customer's, or several customers' added up): each group's figures by the definitions of the
-- stream summaries, and the quality figures. The one definition of these figures: the API's
-- breakdowns and filtered metrics, and the pilot report's device, region and version lists all
-- run it.
-- Placeholders: <parts> rows of breakdown_parts.sql (a subquery, or a table of several
-- customers' parts); <part_delivery_figures> and <part_quality_figures> the figures over parts
-- (piece-columns.ts, with stream_summaries.sql's).
-- Reads: <parts>. Writes: nothing (a query: streamId, value, then the figures; by streamId, then
-- totalSessions descending, then value, nulls last).
SELECT
  streamId,
  value,
  CAST(sum(sessions) AS BIGINT) AS totalSessions,
  {{part_delivery_figures}},
  {{part_quality_figures}}
FROM {{parts}}
GROUP BY ALL
ORDER BY streamId, totalSessions DESC, value NULLS LAST
