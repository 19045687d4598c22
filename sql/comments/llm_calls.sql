-- Descriptions of the view llm_calls and its columns, shown by BI tools.
COMMENT ON VIEW llm_calls IS 'Every LLM call (LLM span) with its agent, model, tokens and time to first chunk, the span''s attributes typed. One row per LLM span; filter on day.';
COMMENT ON COLUMN llm_calls.conversation_name IS 'Full resource name of the conversation.';
COMMENT ON COLUMN llm_calls.turn_index IS '0-based position of the turn in the conversation.';
COMMENT ON COLUMN llm_calls.span_id IS 'Pre-order position of the span in the turn''s tree.';
COMMENT ON COLUMN llm_calls.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN llm_calls.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN llm_calls.agent IS 'The span''s agent attribute (unknown when absent).';
COMMENT ON COLUMN llm_calls.model IS 'The span''s model attribute (unknown when absent).';
COMMENT ON COLUMN llm_calls.input_tokens IS 'The span''s input token count, rounded (NULL when absent).';
COMMENT ON COLUMN llm_calls.output_tokens IS 'The span''s output token count, rounded (NULL when absent).';
COMMENT ON COLUMN llm_calls.first_chunk_ms IS 'The span''s time to first chunk (ms).';
COMMENT ON COLUMN llm_calls.duration_seconds IS 'The span''s duration in seconds.';
