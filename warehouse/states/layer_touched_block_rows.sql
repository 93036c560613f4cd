-- The minute pieces each touched minute (`touched_blocks`) holds over every layer of a partition
-- state, before they are grouped: what layered-state.ts cuts the touched minutes into runs by, so
-- that each run's grouping (layer_touched_minutes.sql) stays within memory. Reads only start_us.
-- Placeholders: <kept> the minute files of the layers kept from the previous state (a query,
-- filtered to the touched blocks' span). Parameters: none.
-- Reads: layer_minutes, touched_blocks, <kept>.
SELECT t.block_us, count(m.start_us) AS n
FROM touched_blocks AS t
LEFT JOIN (
  SELECT start_us FROM layer_minutes
  UNION ALL
  SELECT start_us FROM ({{kept}})
) AS m ON m.start_us // 60000000 * 60000000 = t.block_us
GROUP BY t.block_us
ORDER BY t.block_us;
