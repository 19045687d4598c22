-- Tokens per turn and per conversation that ended without an error, and the LLM cost per conversation, per day and app.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
WITH cost AS (
    SELECT day, app, sum(cost_usd) AS cost_usd, CAST(sum(llm_calls) FILTER (WHERE NOT priced) AS BIGINT) AS unpriced_calls
    FROM daily_costs
    GROUP BY day, app
)
SELECT
    e.day,
    e.app,
    e.conversations,
    e.turns,
    e.tokens,
    round(e.tokens / nullif(e.turns, 0), 1) AS tokens_per_turn,
    e.clean_conversations,
    round(e.clean_tokens / nullif(e.clean_conversations, 0), 1) AS tokens_per_clean_conversation,
    round(c.cost_usd / nullif(e.conversations, 0), 6) AS cost_usd_per_conversation,
    coalesce(c.unpriced_calls, 0) AS unpriced_calls
FROM daily_token_efficiency AS e
LEFT JOIN cost AS c USING (day, app)
WHERE ($app IS NULL OR $app IN (e.app, split_part(e.app, '/', 6)))
    AND e.day >= window_start($since, $until) AND e.day < $until
ORDER BY e.day, e.app;
