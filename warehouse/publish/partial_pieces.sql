-- The reports up to asOf of the states that hold reports after it (of asOf's date), each a piece
-- of its own (report_pieces.sql), added to `partial_pieces` (created empty with the same columns by
-- series-days.ts): the pieces of the days whose series are computed rather than linked.
-- Placeholders: <source> reports; <piece_of_report> (piece-columns.ts). Parameters: none.
-- Reads: reports (dedup-raw.ts over raw_reports, state-reports.ts).
-- Writes: partial_pieces (rows added); drops raw_reports and reports.
INSERT INTO partial_pieces BY NAME
{{@report_pieces}};
DROP TABLE raw_reports;
DROP TABLE reports;
