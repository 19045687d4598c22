-- Descriptions of the view conversation_costs and its columns, shown by BI tools.
COMMENT ON VIEW conversation_costs IS 'LLM tokens and cost of each conversation at the prices of model_prices, with the calls of unpriced models counted and named. One row per conversation that made an LLM call; filter on day.';
COMMENT ON COLUMN conversation_costs.conversation_name IS 'Full resource name of the conversation.';
COMMENT ON COLUMN conversation_costs.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN conversation_costs.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN conversation_costs.llm_calls IS 'LLM spans of the conversation.';
COMMENT ON COLUMN conversation_costs.input_tokens IS 'Their input tokens.';
COMMENT ON COLUMN conversation_costs.output_tokens IS 'Their output tokens.';
COMMENT ON COLUMN conversation_costs.cost_usd IS 'Cost of the calls of priced models (USD; NULL when none was priced).';
COMMENT ON COLUMN conversation_costs.unpriced_calls IS 'Calls of models model_prices has no price for.';
COMMENT ON COLUMN conversation_costs.unpriced_models IS 'Those models.';
