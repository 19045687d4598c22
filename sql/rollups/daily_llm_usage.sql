-- How many LLM calls and tokens does each model use per day, and how fast is its first chunk?
-- Grain: one row per (day, app, model); day is the UTC day of the conversation's start_time (the day of its partition).
-- Read from llm_calls (LLM spans, their attributes typed): a span without a model is counted
-- under "unknown". Token sums skip spans that lack the count.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    day,
    app,
    model,
    count(*) AS llm_calls,
    CAST(coalesce(sum(input_tokens), 0) AS BIGINT) AS input_tokens,
    CAST(coalesce(sum(output_tokens), 0) AS BIGINT) AS output_tokens,
    CAST(coalesce(sum(input_tokens), 0) + coalesce(sum(output_tokens), 0) AS BIGINT) AS total_tokens,
    quantile_cont(first_chunk_ms, 0.5) AS first_chunk_p50_ms,
    quantile_cont(first_chunk_ms, 0.9) AS first_chunk_p90_ms,
    quantile_cont(first_chunk_ms, 0.99) AS first_chunk_p99_ms,
    quantile_cont(duration_seconds, 0.5) AS p50_seconds,
    quantile_cont(duration_seconds, 0.9) AS p90_seconds
FROM llm_calls
SEMI JOIN rollup_partitions USING (app, day)
WHERE day BETWEEN $first AND $last
GROUP BY day, app, model
