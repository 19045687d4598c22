-- Descriptions of the table daily_component_latency and its columns, shown by BI tools.
COMMENT ON TABLE daily_component_latency IS 'Latency percentiles per component (Turn, LLM, Tool, Callback, Guardrail, TTS, VAD, Agent, Other) per day. One row per (day, app, component).';
COMMENT ON COLUMN daily_component_latency.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_component_latency.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_component_latency.component IS 'Component, as component_spans maps span names.';
COMMENT ON COLUMN daily_component_latency.spans IS 'Spans counted.';
COMMENT ON COLUMN daily_component_latency.p50_seconds IS 'Median duration in seconds (exact, interpolated).';
COMMENT ON COLUMN daily_component_latency.p90_seconds IS '90th percentile duration in seconds.';
COMMENT ON COLUMN daily_component_latency.p99_seconds IS '99th percentile duration in seconds.';
COMMENT ON COLUMN daily_component_latency.max_seconds IS 'Longest duration in seconds.';
COMMENT ON COLUMN daily_component_latency.total_seconds IS 'Sum of durations in seconds.';
