-- The pieces of every window at asOf, read where they lie when stream_summaries.sql reads them (a
-- view, not a copy): pieces that lie wholly inside each window they touch and none after asOf,
-- with lo_us the earliest instant each covers. Its sources: hour pieces (hour_pieces.sql), the
-- reports of the hours an edge cuts (edge_pieces.sql), and report_pieces.sql over no report, which
-- gives the view its columns and types when there is nothing else.
-- Placeholders: <sources> those queries joined by UNION ALL (window-pieces.ts: code constants
-- and quoted paths). Parameters: none.
-- Reads: what its sources read, when read. Writes: window_pieces (view: streamId, sessionId,
-- start_us, lo_us, the session dimensions and the piece columns).
CREATE OR REPLACE TEMP VIEW window_pieces AS
{{sources}}
