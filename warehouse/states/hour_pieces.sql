-- The hour pieces of partition states that lie wholly inside every window they touch: lo_us, the
-- earliest instant a piece covers, is its hour's start for the hour's first instant (at_start)
-- and one microsecond later for the rest of the hour; pieces after asOf's hour are left out by it.
-- Placeholders (a view's source: code constants, spliced): <files> the hours.parquet files
-- (compacted or the states' own); <not_cut> a filter on their columns that leaves out the rest of
-- each hour a window edge cuts (`true` when none is cut); <as_of_us> asOf in microseconds since
-- the epoch, a BIGINT literal; <piece_dimensions>, <piece_columns> (piece-columns.ts).
-- Parameters: none.
-- Reads: <files>. Writes: nothing (a query: window_pieces.sql's columns).
SELECT streamId, sessionId, start_us, lo_us, {{piece_dimensions}}, {{piece_columns}} FROM (
  SELECT *, start_us + CASE WHEN at_start THEN 0 ELSE 1 END AS lo_us
  FROM read_parquet({{files}}) WHERE {{not_cut}}
) WHERE lo_us <= {{as_of_us}}
