-- Descriptions of the table daily_llm_tokens and its columns, shown by BI tools.
COMMENT ON TABLE daily_llm_tokens IS 'LLM calls and tokens per agent and model per day: what the cost views price. One row per (day, app, agent, model).';
COMMENT ON COLUMN daily_llm_tokens.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_llm_tokens.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_llm_tokens.agent IS 'The LLM span''s agent attribute (unknown when absent).';
COMMENT ON COLUMN daily_llm_tokens.model IS 'The LLM span''s model attribute (unknown when absent).';
COMMENT ON COLUMN daily_llm_tokens.llm_calls IS 'LLM spans counted.';
COMMENT ON COLUMN daily_llm_tokens.conversations IS 'Distinct conversations that made such a call.';
COMMENT ON COLUMN daily_llm_tokens.input_tokens IS 'Sum of the spans'' input token count.';
COMMENT ON COLUMN daily_llm_tokens.output_tokens IS 'Sum of the spans'' output token count.';
