-- Descriptions of the view daily_costs and its columns, shown by BI tools.
COMMENT ON VIEW daily_costs IS 'LLM cost per agent and model per day at the prices of model_prices; a model without a price has priced = false and NULL costs. One row per (day, app, agent, model).';
COMMENT ON COLUMN daily_costs.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_costs.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_costs.agent IS 'The LLM span''s agent attribute (unknown when absent).';
COMMENT ON COLUMN daily_costs.model IS 'The LLM span''s model attribute (unknown when absent).';
COMMENT ON COLUMN daily_costs.llm_calls IS 'LLM spans counted.';
COMMENT ON COLUMN daily_costs.conversations IS 'Distinct conversations that made such a call.';
COMMENT ON COLUMN daily_costs.input_tokens IS 'Input tokens.';
COMMENT ON COLUMN daily_costs.output_tokens IS 'Output tokens.';
COMMENT ON COLUMN daily_costs.priced IS 'Whether model_prices has a price for the model.';
COMMENT ON COLUMN daily_costs.input_cost_usd IS 'input_tokens at the model''s input price (USD; NULL when unpriced).';
COMMENT ON COLUMN daily_costs.output_cost_usd IS 'output_tokens at the model''s output price (USD; NULL when unpriced).';
COMMENT ON COLUMN daily_costs.cost_usd IS 'input_cost_usd + output_cost_usd (USD; NULL when unpriced).';
