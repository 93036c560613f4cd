-- Views of the analyst catalog (catalog.duckdb), over one published snapshot. Placeholders are
-- filled by catalog.ts with quoted absolute paths and the snapshot's own constants.

-- Which snapshot these views show.
CREATE VIEW snapshot_info AS
SELECT {{snapshot}} AS snapshot, {{as_of}} AS snapshotAsOf, {{snapshot_dir}} AS folder;

-- Deduplicated session reports with ts <= asOf: every column of session-report.md, one row per
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
