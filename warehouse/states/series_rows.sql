-- Several standard sizes of a batch's series, as one query: each size's session buckets from
-- those of the next finer size (session_buckets.sql; each standard size divides the next, so each
-- size groups the rows of the one before it, not every minute again), and each size's series
-- from its buckets (series_from_buckets.sql). partition-state.ts makes `series_rows` of it.
-- Placeholders: <size_buckets> a WITH list, one table per size after the first
-- (session_buckets_<size>, from the next finer one; empty for a single size); <size_series> the
-- sizes' series joined by UNION ALL (partition-state.ts writes both, each size's
-- $bucket_seconds as its number). Parameters: none.
-- Reads: the first size's session buckets (state_minutes, or session_buckets_<size> of
-- coarser_buckets.sql). Writes: nothing (a query: series_of_buckets.sql's rows).
{{size_buckets}}
{{size_series}}
