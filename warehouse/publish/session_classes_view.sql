-- Every session class of the snapshot at asOf: those of the hours an edge cuts
-- (snapshot_session_classes.sql) and those of every class unit (class-units.ts). A session's part
-- of one class may be split over several rows (one per unit or cut hour that has some of it):
-- every reader adds a session's rows up.
-- The same view of the cut hours and some of the units only (`session_classes_fresh`: all but the
-- settled ones, snapshot-summaries.ts) is made by the same statement.
-- Placeholders: <view> the view's name; <units> for each customer with units, `UNION ALL BY NAME
-- SELECT '<customer>' AS customer, * FROM read_parquet([<files>])` (class-units.ts: code constants
-- and quoted paths), or nothing.
-- Parameters: none.
-- Reads: session_classes_cut, the units' files. Writes: <view> (a view).
CREATE OR REPLACE TEMP VIEW {{view}} AS
SELECT * FROM session_classes_cut
{{units}}
