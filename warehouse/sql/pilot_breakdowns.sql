-- The breakdowns of a pilot report, for every stream in `reports`: sessions per device, region,
-- SDK version and signaling version; reports, sessions and bytes per delivery mode; bytes per
-- delivery path; fallback segments per reason. One row per (stream, kind, key).
SELECT streamId, 'device' AS kind, coalesce(device, 'unknown') AS key,
       count(DISTINCT sessionId) AS sessions, count(*) AS reports, CAST(NULL AS BIGINT) AS amount
FROM reports GROUP BY ALL
UNION ALL
SELECT streamId, 'region', coalesce(region, 'unknown'), count(DISTINCT sessionId), count(*), NULL
FROM reports GROUP BY ALL
UNION ALL
SELECT streamId, 'sdkVersion', coalesce(sdkVersion, 'unknown'), count(DISTINCT sessionId), count(*), NULL
FROM reports GROUP BY ALL
UNION ALL
SELECT streamId, 'signalingVersion', coalesce(signalingVersion, 'unknown'), count(DISTINCT sessionId), count(*), NULL
FROM reports GROUP BY ALL
UNION ALL
-- amount: bytes delivered in the reports of that mode
SELECT streamId, 'deliveryMode', coalesce(deliveryMode, 'unknown'), count(DISTINCT sessionId), count(*),
       CAST(sum(bytesOffloaded + bytesFallback) AS BIGINT)
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
