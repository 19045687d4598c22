-- LLM calls, input and output tokens and time to first chunk (ms) per model per UTC day and app.
-- Read from the daily_llm_usage rollup; time to first chunk percentiles are exact over each app's day.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    app,
    model,
    llm_calls,
    input_tokens,
    output_tokens,
    round(first_chunk_p50_ms, 1) AS first_chunk_p50_ms,
    round(first_chunk_p90_ms, 1) AS first_chunk_p90_ms
FROM daily_llm_usage
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
ORDER BY day, app, model;
