-- One app's LLM cost per model ($app) in [$since, $until) and in the period before ([$before, $since)).
SELECT
    model,
    bool_and(priced) AS priced,
    sum(cost_usd) FILTER (WHERE day >= $since) AS current_usd,
    sum(cost_usd) FILTER (WHERE day < $since) AS previous_usd,
    sum(llm_calls) FILTER (WHERE day >= $since) AS current_calls,
    sum(llm_calls) FILTER (WHERE day < $since) AS previous_calls
FROM daily_costs
WHERE app = $app AND day >= $before AND day < $until
GROUP BY model
ORDER BY current_usd DESC NULLS LAST, model;
