-- Views of the analyst catalog (catalog.duckdb), over one published snapshot. Placeholders are
-- filled by catalog.ts with quoted absolute paths and the snapshot's own constants, and by
-- breakdowns.ts (<head_fields>, <head_columns>, <piece_sums>, code constants); <window_classes>
-- the windows and their classes as VALUES rows. `session_classes` (the snapshot's session
-- classes, with `customer`) is created by catalog.ts before these.

-- Which snapshot these views show.
CREATE VIEW snapshot_info AS
SELECT {{snapshot}} AS snapshot, {{as_of}} AS snapshotAsOf, {{snapshot_dir}} AS folder;

-- Deduplicated session reports with ts <= asOf: every column of docs/sdk-ingest.md, one row per
-- reportId (dedup_reports.sql's rule), read from the snapshot's input files.
CREATE VIEW session_reports AS
WITH dedup_input AS (
  SELECT * FROM ({{raw}}) WHERE ts <= {{as_of}}
),
{{@dedup_reports}}
SELECT * EXCLUDE (filename, file_row_number, _source_file, _source_row)
FROM dedup_input ANTI JOIN dedup_dropped USING (filename, file_row_number);

-- The stream metrics of the API: the summary fields that describe delivery, per window.
CREATE VIEW stream_metrics AS
SELECT windowName, customer, streamId, totalSessions, totalBytesOffloaded, totalBytesFallback,
       avgOffloadRatio, avgPeerCount, avgBufferHealth
FROM stream_summaries;

CREATE VIEW platform_summaries AS
SELECT * FROM {{platform}};

-- Per-customer rows of every window, added up like the platform's.
CREATE VIEW customer_summaries AS
SELECT * FROM {{customers}};

-- Every session's part of every window, with its session dimensions at its earliest report in the
-- window (by ts, then seq): the sessions a breakdown groups (breakdown_parts.sql), one row per
-- (windowName, stream, session). Group it by any dimension, filter it by any, over a stream, a
-- customer or everything: the figures of GET /telemetry/breakdown (docs/analysts.md).
CREATE VIEW window_sessions AS
SELECT windowName, customer, streamId, sessionId, {{head_columns}}, * EXCLUDE (windowName, customer, streamId, sessionId, head)
FROM (
  SELECT
    w.windowName, c.customer, c.streamId, c.sessionId,
    min(struct_pack({{head_fields}})) AS head,
    {{piece_sums}}
  FROM session_classes AS c
  JOIN (VALUES {{window_classes}}) AS w(windowName, max_class) ON c.class <= w.max_class
  GROUP BY w.windowName, c.customer, c.streamId, c.sessionId
);
