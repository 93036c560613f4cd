-- The window class of a piece (an expression, included where pieces are classed): 1 for the
-- narrowest window that holds it (1h) up to 5 for the unbounded one (all); windows nest, so a
-- window of class w is made of the pieces of classes 1..w. lo_us: the earliest instant the piece
-- covers (microseconds since the epoch).
-- Parameters: $as_of (TIMESTAMP), $window_seconds (BIGINT[4], lengths of the four bounded windows).
CASE
  WHEN lo_us > epoch_us($as_of) - $window_seconds[1] * 1000000 THEN 1
  WHEN lo_us > epoch_us($as_of) - $window_seconds[2] * 1000000 THEN 2
  WHEN lo_us > epoch_us($as_of) - $window_seconds[3] * 1000000 THEN 3
  WHEN lo_us > epoch_us($as_of) - $window_seconds[4] * 1000000 THEN 4
  ELSE 5
END
