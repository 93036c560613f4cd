-- The parts of a breakdown (docs/metrics.md, "Session dimensions"; docs/api.md,
-- "Breakdown"): the sessions of a window, grouped by the value of one session dimension, each
-- group's sums (breakdown_rows.sql makes the figures of parts). Sessions never span customers, so
-- the parts of several customers' classes, each made alone, add up to those of all of them at
-- once: a platform-wide breakdown is made customer by customer, in the memory of one customer.
-- A session (stream, session id) has one value per dimension in a window: that of its earliest
-- report in it (the least `head` of its class rows: first_report, then the dimensions, which only
-- breaks ties between reports with the same ts and seq). Filters keep or drop whole sessions by
-- these values: for each dimension, keep (when given) the sessions whose value is in the keep
-- list, and drop those whose value is in the drop list; a NULL in a list stands for the value null.
-- Placeholders: <classes> rows of session_classes.sql (a table, or read_parquet of the snapshot's
-- files: code constants and quoted paths); <head_fields>, <head_columns>, <piece_sums>
-- (breakdowns.ts); <stream_filter> `streamId = $stream` for one stream, else `true` (a condition
-- on a parameter that may be NULL is not pushed into the Parquet scan, which then reads every
-- stream's row groups); <stream_group> `streamId` for groups per stream too, else a NULL;
-- <by_value> the column of the dimension grouped by, or a NULL for one group; <dimension_filters>
-- the filters' conditions over their $keep_<dim> and $drop_<dim> (`true` without filters);
-- <questions> nothing, or (many questions at once, breakdown-batch.ts) a join of each session to
-- the questions that count it, whose columns <by_value> and <dimension_filters> then read; all
-- written by breakdowns.ts and breakdown-batch.ts from code constants. <stream_piece_sums>, <peer_mean_sum> and
-- <peer_sessions> (piece-columns.ts).
-- Parameters: $max_class (INTEGER, the window's class), $stream (VARCHAR, with the stream
-- filter only), $keep_<dim> and $drop_<dim> (VARCHAR[], with that dimension's filters only).
-- Reads: <classes>. Writes: nothing (a query: streamId (NULL unless per stream), value, the
-- sessions, the piece sums a stream's window adds up, avgPeerCount's numerator and denominator,
-- and the sessions' startup times (those that have one); in no order).
WITH sessions AS (
  SELECT
    streamId, sessionId,
    min(head) AS head,
    {{piece_sums}}
  FROM (SELECT *, struct_pack({{head_fields}}) AS head FROM {{classes}} WHERE class <= $max_class AND {{stream_filter}})
  GROUP BY streamId, sessionId
),
kept AS (
  SELECT * EXCLUDE (head), {{by_value}} AS value
  FROM (SELECT *, {{head_columns}} FROM sessions){{questions}}
  WHERE {{dimension_filters}}
)
SELECT
  {{stream_group}} AS streamId,
  value,
  count(*) AS sessions,
  {{stream_piece_sums}},
  {{peer_mean_sum}} AS peer_mean_sum,
  {{peer_sessions}} AS peer_sessions,
  list(startup_ms) FILTER (WHERE startup_ms IS NOT NULL) AS startups
FROM kept
GROUP BY ALL
