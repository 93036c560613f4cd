-- Each deduplicated report of <source> as a piece of partial sums (the shape that partition
-- states store per minute and per hour), so that series and summaries over reports and over
-- states run one and the same SQL. lo_us: the report's ts in microseconds since the epoch.
-- Placeholders: <source> a relation of deduplicated reports (a table name or a parenthesised
-- query built by code); <piece_of_report> each piece column's value for one report
-- (piece-columns.ts); <piece_dimensions> the session dimensions, which <source> must have.
-- Parameters: none.
-- Reads: <source>. Writes: nothing (a query: streamId, sessionId, start_us, lo_us, the session
-- dimensions, then the piece columns).
SELECT
  streamId,
  sessionId,
  epoch_us(ts) AS start_us,
  epoch_us(ts) AS lo_us,
  {{piece_dimensions}},
  {{piece_of_report}}
FROM {{source}}
