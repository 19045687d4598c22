-- What do each agent's LLM calls cost per day and model, at the prices of model_prices?
-- Grain: one row per (day, app, agent, model), from the rollup daily_llm_tokens.
-- cost_usd = input_tokens x input price + output_tokens x output price (per million tokens; CES
-- traces carry no cached-token count, so no call is priced at the cached rate). A model without a
-- price has priced = false and NULL costs: it is counted and named, never costed at zero.
CREATE OR REPLACE VIEW daily_costs AS
SELECT
    t.day,
    t.app,
    t.agent,
    t.model,
    t.llm_calls,
    t.conversations,
    t.input_tokens,
    t.output_tokens,
    p.model IS NOT NULL AS priced,
    t.input_tokens * p.input_usd_per_million / 1e6 AS input_cost_usd,
    t.output_tokens * p.output_usd_per_million / 1e6 AS output_cost_usd,
    (t.input_tokens * p.input_usd_per_million + t.output_tokens * p.output_usd_per_million) / 1e6 AS cost_usd
FROM daily_llm_tokens AS t
LEFT JOIN model_prices AS p USING (model)
