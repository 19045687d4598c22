-- Descriptions of the table model_prices and its columns, shown by BI tools.
COMMENT ON TABLE model_prices IS 'The price of each model the cost views apply, from CES_MODEL_PRICES or the bundled list prices; written by each load. One row per model.';
COMMENT ON COLUMN model_prices.model IS 'Model name, as LLM spans give it.';
COMMENT ON COLUMN model_prices.input_usd_per_million IS 'USD per million input tokens.';
COMMENT ON COLUMN model_prices.output_usd_per_million IS 'USD per million output tokens.';
COMMENT ON COLUMN model_prices.cached_input_usd_per_million IS 'USD per million cached input tokens (CES traces carry no cached-token count: not applied).';
COMMENT ON COLUMN model_prices.effective_date IS 'Since when the price holds.';
COMMENT ON COLUMN model_prices.source IS 'Where the price was read.';
