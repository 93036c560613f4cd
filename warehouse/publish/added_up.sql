-- Platform-wide and per-customer rows of every window (platform_summaries.sql), added up from
-- the snapshot's stream summaries.
-- Placeholders: <summaries> summaries. Parameters: $window_names.
-- Reads: summaries (window_summaries.sql). Writes: added_up (customer NULL: the platform's rows).
CREATE OR REPLACE TEMP TABLE added_up AS
{{@platform_summaries}}
