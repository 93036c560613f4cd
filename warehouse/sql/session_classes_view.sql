-- Every session class of the snapshot at asOf: the recent ones (snapshot_session_classes.sql) and
-- each customer's older ones (older-classes.ts). A session's part of one class may be split over
-- two rows, one recent and one older: every reader adds a session's rows up.
-- Placeholders: <older> for each customer with older classes, `UNION ALL BY NAME SELECT
-- '<customer>' AS customer, * FROM read_parquet('<file>')` (older-classes.ts: code constants and
-- quoted paths), or nothing.
-- Parameters: none.
-- Reads: session_classes_recent, the older files. Writes: session_classes (view).
CREATE OR REPLACE TEMP VIEW session_classes AS
SELECT * FROM session_classes_recent
{{older}}
