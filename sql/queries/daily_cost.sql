-- LLM cost per day and app at the prices of model_prices, by model or by agent, with the calls of unpriced models counted and named.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
-- param by CHOICE(model|agent|app) = model: one row per day, app and this (app: the whole app)
SELECT
    day,
    app,
    CASE $by WHEN 'agent' THEN agent WHEN 'app' THEN NULL ELSE model END AS subject,
    CAST(sum(llm_calls) AS BIGINT) AS llm_calls,
    CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
    CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
    round(sum(cost_usd), 6) AS cost_usd,
    CAST(sum(llm_calls) FILTER (WHERE NOT priced) AS BIGINT) AS unpriced_calls,
    string_agg(DISTINCT model, ', ' ORDER BY model) FILTER (WHERE NOT priced) AS unpriced_models
FROM daily_costs
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
GROUP BY ALL
ORDER BY day, app, cost_usd DESC NULLS LAST, subject;
