-- LLM calls, input and output tokens and time to first chunk (ms) per model per UTC day.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    coalesce(attributes ->> 'model', 'unknown') AS model,
    count(*) AS llm_calls,
    CAST(coalesce(sum(round(TRY_CAST(attributes ->> 'input token count' AS DOUBLE))), 0) AS BIGINT) AS input_tokens,
    CAST(coalesce(sum(round(TRY_CAST(attributes ->> 'output token count' AS DOUBLE))), 0) AS BIGINT) AS output_tokens,
    quantile_cont(TRY_CAST(attributes ->> 'time to first chunk (ms)' AS DOUBLE), 0.5) AS first_chunk_p50_ms,
    quantile_cont(TRY_CAST(attributes ->> 'time to first chunk (ms)' AS DOUBLE), 0.9) AS first_chunk_p90_ms
FROM component_spans
WHERE component = 'LLM'
    AND ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= $since AND day < $until
GROUP BY day, model
ORDER BY day, model;
