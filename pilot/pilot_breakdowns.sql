-- The routing breakdowns of a pilot report, for every stream in `reports`: reports, sessions and
-- bytes per delivery mode; bytes per delivery path; fallback segments per reason. One row per
-- (stream, kind, key). Sessions per device, region and version are the API's breakdowns
-- (breakdown_rows.sql: a session counted once, by its earliest report; pilot/figures.ts).
-- amount: bytes delivered in the reports of that mode
SELECT streamId, 'deliveryMode' AS kind, coalesce(deliveryMode, 'unknown') AS key, count(DISTINCT sessionId) AS sessions,
       count(*) AS reports, CAST(sum(bytesOffloaded + bytesFallback) AS BIGINT) AS amount
FROM reports GROUP BY ALL
UNION ALL
-- amount: bytes per delivery path
SELECT streamId, 'path', key, NULL, NULL, CAST(sum(value) AS BIGINT)
FROM (SELECT streamId, unnest(map_keys(bytesByPath)) AS key, unnest(map_values(bytesByPath)) AS value FROM reports)
GROUP BY ALL
UNION ALL
-- amount: segments that fell back to the CDN for that reason
SELECT streamId, 'fallbackReason', key, NULL, NULL, CAST(sum(value) AS BIGINT)
FROM (SELECT streamId, unnest(map_keys(fallbackReasons)) AS key, unnest(map_values(fallbackReasons)) AS value FROM reports)
GROUP BY ALL
ORDER BY streamId, kind, key
