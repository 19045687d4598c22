-- Descriptions of the table daily_token_efficiency and its columns, shown by BI tools.
COMMENT ON TABLE daily_token_efficiency IS 'Conversations, turns and LLM tokens per day, in all and for the conversations that ended without an error. One row per (day, app).';
COMMENT ON COLUMN daily_token_efficiency.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_token_efficiency.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_token_efficiency.conversations IS 'Conversations of the day.';
COMMENT ON COLUMN daily_token_efficiency.turns IS 'Their turns (turn_count).';
COMMENT ON COLUMN daily_token_efficiency.tokens IS 'Input and output tokens of their LLM spans.';
COMMENT ON COLUMN daily_token_efficiency.clean_conversations IS 'Conversations that ended (have an end_time) with no erroring tool response.';
COMMENT ON COLUMN daily_token_efficiency.clean_tokens IS 'Tokens of those conversations.';
