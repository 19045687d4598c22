-- How many tokens does a turn take, and a conversation that ended without an error, per day?
-- Grain: one row per (day, app); day is the UTC day of the conversation's start_time (the day of its partition).
-- tokens: input and output tokens of the day's LLM calls (llm_calls); turns: the day's
-- turns (conversations.turn_count). A clean conversation has ended (it has an end_time) and no
-- tool response of it is an error; clean_tokens are the tokens of those conversations.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
WITH spent AS (
    SELECT conversation_name, sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens
    FROM llm_calls
    SEMI JOIN rollup_partitions USING (app, day)
    WHERE day BETWEEN $first AND $last
    GROUP BY conversation_name
),
failed AS (
    SELECT DISTINCT conversation_name
    FROM tool_responses
    WHERE is_error AND partition_date BETWEEN $first AND $last
),
each_conversation AS (
    SELECT
        c.partition_date AS day,
        c.app,
        coalesce(c.turn_count, 0) AS turns,
        coalesce(s.tokens, 0) AS tokens,
        c.end_time IS NOT NULL AND f.conversation_name IS NULL AS clean
    FROM conversations AS c
    SEMI JOIN rollup_partitions AS p ON p.app = c.app AND p.day = c.partition_date
    LEFT JOIN spent AS s USING (conversation_name)
    LEFT JOIN failed AS f USING (conversation_name)
    WHERE c.partition_date BETWEEN $first AND $last
)
SELECT
    day,
    app,
    count(*) AS conversations,
    CAST(sum(turns) AS BIGINT) AS turns,
    CAST(sum(tokens) AS BIGINT) AS tokens,
    count(*) FILTER (WHERE clean) AS clean_conversations,
    CAST(coalesce(sum(tokens) FILTER (WHERE clean), 0) AS BIGINT) AS clean_tokens
FROM each_conversation
GROUP BY day, app
