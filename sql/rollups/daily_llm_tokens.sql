-- How many LLM calls and tokens does each agent spend on each model per day (what the cost views price)?
-- Grain: one row per (day, app, agent, model); day is the UTC day of the conversation's start_time (the day of its partition).
-- Read from llm_calls (LLM spans, their attributes typed): a span without an agent or a model is
-- counted under "unknown". conversations counts the distinct conversations that made such a call.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    day,
    app,
    agent,
    model,
    count(*) AS llm_calls,
    count(DISTINCT conversation_name) AS conversations,
    CAST(coalesce(sum(input_tokens), 0) AS BIGINT) AS input_tokens,
    CAST(coalesce(sum(output_tokens), 0) AS BIGINT) AS output_tokens
FROM llm_calls
SEMI JOIN rollup_partitions USING (app, day)
WHERE day BETWEEN $first AND $last
GROUP BY day, app, agent, model
