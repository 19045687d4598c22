-- Descriptions of the table daily_llm_usage and its columns, shown by BI tools.
COMMENT ON TABLE daily_llm_usage IS 'LLM calls, token usage and time to first chunk per model per day. One row per (day, app, model).';
COMMENT ON COLUMN daily_llm_usage.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_llm_usage.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_llm_usage.model IS 'The LLM span''s model attribute (unknown when missing).';
COMMENT ON COLUMN daily_llm_usage.llm_calls IS 'LLM spans counted.';
COMMENT ON COLUMN daily_llm_usage.input_tokens IS 'Sum of the input token count attribute.';
COMMENT ON COLUMN daily_llm_usage.output_tokens IS 'Sum of the output token count attribute.';
COMMENT ON COLUMN daily_llm_usage.total_tokens IS 'input_tokens + output_tokens.';
COMMENT ON COLUMN daily_llm_usage.first_chunk_p50_ms IS 'Median time to first chunk (ms).';
COMMENT ON COLUMN daily_llm_usage.first_chunk_p90_ms IS '90th percentile time to first chunk (ms).';
COMMENT ON COLUMN daily_llm_usage.first_chunk_p99_ms IS '99th percentile time to first chunk (ms).';
COMMENT ON COLUMN daily_llm_usage.p50_seconds IS 'Median LLM span duration in seconds.';
COMMENT ON COLUMN daily_llm_usage.p90_seconds IS '90th percentile LLM span duration in seconds.';
