-- A layer's per-session buckets of the standard sizes longer than a minute (5 and 10 minutes, an
-- hour, 6 hours and a day), from its minute pieces: what the day's series of those sizes is remade
-- from when a later layer adds reports to one of their buckets (layered-state.ts), without reading
-- every minute of the bucket. Each size from the one before it (each divides the next: the
-- smallest from the minutes), as series_rows.sql does, so that no grouping holds every size's
-- buckets at once. Exact: integer and DECIMAL sums.
-- Placeholders: <size_buckets> a WITH list, one table per size (session_buckets.sql over the one
-- before it; layered-state.ts writes it); <size_rows> each size's buckets under its size, joined by
-- UNION ALL. Parameters: none.
-- Reads: layer_minutes (layer_pieces.sql). Writes: layer_sessions.
CREATE OR REPLACE TEMP TABLE layer_sessions AS
{{size_buckets}}
{{size_rows}};
