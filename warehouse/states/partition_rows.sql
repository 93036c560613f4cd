-- One partition's rows of a batch table, in the table's order and without the partition's own
-- columns, into a file of its state's (temporary) folder: the state's folder is fsynced and
-- renamed whole afterwards (state-store.ts writeStates), so the file is written in place.
-- Placeholders (code constants; names and paths as quoted literals): <table> state_hours or
-- state_series; <customer>; <date>; <file> the target; <compression>; <row_group_size> empty, or
-- `, ROW_GROUP_SIZE <n>`.
-- Parameters: none.
-- Reads: <table>. Writes: <file>.
COPY (SELECT * EXCLUDE (customer, date) FROM {{table}} WHERE customer = {{customer}} AND date = DATE {{date}})
TO {{file}} (FORMAT parquet, COMPRESSION {{compression}}{{row_group_size}})
