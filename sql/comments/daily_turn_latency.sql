-- Descriptions of the table daily_turn_latency and its columns, shown by BI tools.
COMMENT ON TABLE daily_turn_latency IS 'Perceived latency and turn duration percentiles per day, from each turn''s root span. One row per (day, app).';
COMMENT ON COLUMN daily_turn_latency.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_turn_latency.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_turn_latency.turns IS 'Turns with a root span.';
COMMENT ON COLUMN daily_turn_latency.turns_with_perceived_latency IS 'Turns whose root span carries perceived latency (ms).';
COMMENT ON COLUMN daily_turn_latency.perceived_p50_ms IS 'Median perceived latency (ms): how long the caller waited for the agent.';
COMMENT ON COLUMN daily_turn_latency.perceived_p90_ms IS '90th percentile perceived latency (ms).';
COMMENT ON COLUMN daily_turn_latency.perceived_p99_ms IS '99th percentile perceived latency (ms).';
COMMENT ON COLUMN daily_turn_latency.duration_p50_seconds IS 'Median turn duration in seconds.';
COMMENT ON COLUMN daily_turn_latency.duration_p90_seconds IS '90th percentile turn duration in seconds.';
COMMENT ON COLUMN daily_turn_latency.duration_p99_seconds IS '99th percentile turn duration in seconds.';
