-- Descriptions of the table daily_span_latency and its columns, shown by BI tools.
COMMENT ON TABLE daily_span_latency IS 'Span duration percentiles per span name per day. One row per (day, app, span_name).';
COMMENT ON COLUMN daily_span_latency.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_span_latency.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_span_latency.component IS 'The component the span measures (component_spans.component).';
COMMENT ON COLUMN daily_span_latency.span_name IS 'Span name as the API gives it.';
COMMENT ON COLUMN daily_span_latency.spans IS 'Spans counted.';
COMMENT ON COLUMN daily_span_latency.p50_seconds IS 'Median duration in seconds (exact, interpolated).';
COMMENT ON COLUMN daily_span_latency.p90_seconds IS '90th percentile duration in seconds.';
COMMENT ON COLUMN daily_span_latency.p99_seconds IS '99th percentile duration in seconds.';
COMMENT ON COLUMN daily_span_latency.max_seconds IS 'Longest duration in seconds.';
