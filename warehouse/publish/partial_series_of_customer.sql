-- One customer's series of asOf's date, computed from its reports up to asOf, sorted by stream,
-- size and time like a state's series file (empty when the customer has none: every customer of a
-- snapshot has at least one series file, so that readers' globs always match).
-- Placeholders: none. Parameters: $customer.
-- Reads: partial_series (partial_series.sql). Writes: nothing (a query, copied to the day's file).
SELECT * FROM partial_series
WHERE split_part(streamId, ':', 1) = $customer
ORDER BY streamId, bucketSeconds, bucketStart
