-- The deduplicated reports of the hours that window edges cut, each a piece of its own
-- (report_pieces.sql: its lo_us is its ts), with the customer that names the state it belongs to.
-- Placeholders: <source> reports; <piece_of_report> (piece-columns.ts). Parameters: none.
-- Reads: reports (dedup-raw.ts over raw_reports, state-reports.ts).
-- Writes: edge_reports; drops raw_reports and reports.
CREATE OR REPLACE TEMP TABLE edge_reports AS
SELECT split_part(streamId, ':', 1) AS customer, * FROM (
{{@report_pieces}}
);
DROP TABLE raw_reports;
DROP TABLE reports;
