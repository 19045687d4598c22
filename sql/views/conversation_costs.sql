-- What did each conversation's LLM calls cost, at the prices of model_prices?
-- Grain: one row per conversation that made an LLM call, with its app and day (the UTC day of its
-- start_time, the day of its partition: filter on it to read only those days).
-- Read from its LLM calls (llm_calls): tokens per conversation, cost_usd over the calls of
-- priced models (input and output tokens at their prices per million), and the calls of models
-- without a price, counted and named (unpriced_models) rather than costed at zero: cost_usd is
-- NULL when no call was priced.
CREATE OR REPLACE VIEW conversation_costs AS
WITH calls AS (
    SELECT
        conversation_name,
        app,
        day,
        model,
        coalesce(input_tokens, 0) AS input_tokens,
        coalesce(output_tokens, 0) AS output_tokens
    FROM llm_calls
)
SELECT
    c.conversation_name,
    c.app,
    c.day,
    count(*) AS llm_calls,
    CAST(sum(c.input_tokens) AS BIGINT) AS input_tokens,
    CAST(sum(c.output_tokens) AS BIGINT) AS output_tokens,
    sum((c.input_tokens * p.input_usd_per_million + c.output_tokens * p.output_usd_per_million) / 1e6) AS cost_usd,
    count(*) FILTER (WHERE p.model IS NULL) AS unpriced_calls,
    list(DISTINCT c.model ORDER BY c.model) FILTER (WHERE p.model IS NULL) AS unpriced_models
FROM calls AS c
LEFT JOIN model_prices AS p USING (model)
GROUP BY c.conversation_name, c.app, c.day
