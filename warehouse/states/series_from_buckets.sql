-- One standard size of a batch's series, from its session buckets of that size (the minute
-- pieces for 60 s): series_of_buckets.sql over a table of buckets rather than a CTE.
-- Placeholders: <buckets> the table of session buckets (state_minutes, or session_buckets_<size>
-- of coarser_buckets.sql and series_rows.sql). Parameters: $bucket_seconds.
-- Reads: <buckets>. Writes: nothing (a query: series_of_buckets.sql's rows).
WITH session_buckets AS (SELECT * FROM {{buckets}})
{{@series_of_buckets}}
