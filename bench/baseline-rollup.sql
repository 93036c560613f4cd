-- The benchmark's baseline: the same figures as a rollup run, computed by a bare DuckDB script
-- straight from the raw files, written the plain way (no validation, no partitioning, no
-- manifest, no catalog). Placeholders: <raw> (a glob of the landed files) and the three output
-- files. Statements are separated by blank lines.
-- Parameters: $as_of, $horizon_seconds.
CREATE OR REPLACE TEMP TABLE base_reports AS
SELECT DISTINCT ON (reportId)
  streamId, sessionId, CAST(ts AS TIMESTAMP) AS ts, final, bytesOffloaded, bytesFallback, peerCount, bufferHealth, stallCount
FROM read_parquet({{raw}}, union_by_name = true)
WHERE ts <= $as_of;

CREATE OR REPLACE TEMP TABLE base_active AS
SELECT streamId, count(*) AS active
FROM (SELECT streamId, sessionId, max(ts) AS last_ts, arg_max(final, ts) AS last_final FROM base_reports GROUP BY ALL)
WHERE last_ts >= $as_of - to_seconds($horizon_seconds) AND NOT last_final
GROUP BY streamId;

COPY (
  WITH windows(windowName, lower) AS (
    VALUES ('1h', $as_of - INTERVAL 1 HOUR), ('24h', $as_of - INTERVAL 24 HOUR), ('7d', $as_of - INTERVAL 7 DAY),
           ('30d', $as_of - INTERVAL 30 DAY), ('all', NULL::TIMESTAMP)
  ),
  win AS (SELECT w.windowName, r.* FROM base_reports r JOIN windows w ON w.lower IS NULL OR r.ts > w.lower),
  sess AS (SELECT windowName, streamId, sessionId, avg(peerCount) AS m FROM win GROUP BY ALL)
  SELECT win.windowName, win.streamId, count(DISTINCT sessionId) AS totalSessions,
         sum(bytesOffloaded) AS totalBytesOffloaded, sum(bytesFallback) AS totalBytesFallback,
         coalesce(sum(bytesOffloaded) / nullif(sum(bytesOffloaded) + sum(bytesFallback), 0), 0) AS avgOffloadRatio,
         any_value(p.avg_peers) AS avgPeerCount, avg(bufferHealth) AS avgBufferHealth,
         coalesce(any_value(a.active), 0) AS activePeers, coalesce(any_value(a.active), 0) > 0 AS live, max(ts) AS lastSeenAt
  FROM win
  JOIN (SELECT windowName, streamId, avg(m) AS avg_peers FROM sess GROUP BY ALL) p USING (windowName, streamId)
  LEFT JOIN base_active a USING (streamId)
  GROUP BY win.windowName, win.streamId
  ORDER BY 1, 2
) TO {{summaries_out}} (FORMAT parquet);

COPY (
  WITH b AS (
    SELECT size AS bucketSeconds, epoch_us(ts) // (size * 1000000) AS bucket, r.*
    FROM base_reports r, (VALUES (60::BIGINT), (300), (600), (3600), (21600), (86400)) s(size)
  ),
  sess AS (SELECT bucketSeconds, streamId, bucket, sessionId, avg(peerCount) AS m FROM b GROUP BY ALL)
  SELECT b.bucketSeconds, b.streamId, make_timestamp(b.bucket * b.bucketSeconds * 1000000) AS bucketStart,
         count(DISTINCT sessionId) AS sessions, sum(bytesOffloaded) AS bytesOffloaded, sum(bytesFallback) AS bytesFallback,
         coalesce(sum(bytesOffloaded) / nullif(sum(bytesOffloaded) + sum(bytesFallback), 0), 0) AS offloadRatio,
         any_value(p.avg_peers) AS avgPeerCount, avg(bufferHealth) AS avgBufferHealth, sum(stallCount) AS rebufferEvents
  FROM b JOIN (SELECT bucketSeconds, streamId, bucket, avg(m) AS avg_peers FROM sess GROUP BY ALL) p USING (bucketSeconds, streamId, bucket)
  GROUP BY b.bucketSeconds, b.streamId, b.bucket
  ORDER BY 1, 2, 3
) TO {{series_out}} (FORMAT parquet);

COPY (
  WITH windows(windowName, lower) AS (
    VALUES ('1h', $as_of - INTERVAL 1 HOUR), ('24h', $as_of - INTERVAL 24 HOUR), ('7d', $as_of - INTERVAL 7 DAY),
           ('30d', $as_of - INTERVAL 30 DAY), ('all', NULL::TIMESTAMP)
  ),
  win AS (SELECT w.windowName, r.* FROM base_reports r JOIN windows w ON w.lower IS NULL OR r.ts > w.lower)
  SELECT windowName, count(DISTINCT streamId) AS streams, count(DISTINCT (streamId, sessionId)) AS totalSessions,
         sum(bytesOffloaded) AS totalBytesOffloaded, sum(bytesFallback) AS totalBytesFallback
  FROM win GROUP BY windowName
) TO {{platform_out}} (FORMAT parquet);
