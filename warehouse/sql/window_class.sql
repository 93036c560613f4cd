-- The window class of a piece (an expression, included where pieces are classed): 1 for the
-- narrowest window that holds it (5m) up to 7 for the unbounded one (all); windows nest, so a
-- window of class w is made of the pieces of classes 1..w. lo_us: the earliest instant the piece
-- covers (microseconds since the epoch).
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[6], lengths of the six bounded windows,
-- narrowest first: windows.ts).
CASE
  WHEN lo_us > epoch_us($as_of) - $window_seconds[1] * 1000000 THEN 1
  WHEN lo_us > epoch_us($as_of) - $window_seconds[2] * 1000000 THEN 2
  WHEN lo_us > epoch_us($as_of) - $window_seconds[3] * 1000000 THEN 3
  WHEN lo_us > epoch_us($as_of) - $window_seconds[4] * 1000000 THEN 4
  WHEN lo_us > epoch_us($as_of) - $window_seconds[5] * 1000000 THEN 5
  WHEN lo_us > epoch_us($as_of) - $window_seconds[6] * 1000000 THEN 6
  ELSE 7
END
