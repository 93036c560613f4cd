-- A batch's series of every standard size asked for, as `series_rows`, in one statement: each
-- size's session buckets from those of the next finer size (session_buckets.sql; each standard
-- size divides the next, so each size groups the rows of the one before it, not every minute
-- again), and each size's series from its buckets (series_from_buckets.sql).
-- Placeholders: <size_buckets> a WITH list, one table per size past 60 s
-- (session_buckets_<size>, from the next finer one; empty when 60 s is the only size);
-- <size_series> the sizes' series joined by UNION ALL (partition-state.ts writes both, each
-- size's $bucket_seconds as its number). Parameters: none.
-- Reads: state_minutes (the 60 s session buckets). Writes: series_rows.
CREATE OR REPLACE TEMP TABLE series_rows AS
{{size_buckets}}
{{size_series}}
