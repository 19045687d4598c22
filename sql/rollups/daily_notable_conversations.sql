-- Which conversations of a day are worth a look: its slowest, and those whose tool calls failed?
-- Grain: one row per (day, app, kind, rank); day is the UTC day of the conversation's start_time
-- (the day of its partition). kind 'slowest' ranks the app-day's ended conversations by
-- duration_seconds, longest first; kind 'failing' ranks those with an erroring tool response by
-- how many they had, then the longer first. Each kind keeps its first 3, so a day costs at most
-- 6 rows however many conversations it has: the dashboard draws their traces as waterfalls.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
WITH failed AS (
    SELECT conversation_name, count(*) AS erroring_tool_calls
    FROM tool_responses
    WHERE is_error AND partition_date BETWEEN $first AND $last
    GROUP BY conversation_name
),
candidates AS (
    SELECT
        c.partition_date AS day,
        c.app,
        c.conversation_name,
        c.duration_seconds,
        c.turn_count,
        coalesce(f.erroring_tool_calls, 0) AS erroring_tool_calls
    FROM conversations AS c
    SEMI JOIN rollup_partitions AS p ON p.app = c.app AND p.day = c.partition_date
    LEFT JOIN failed AS f USING (conversation_name)
    WHERE c.partition_date BETWEEN $first AND $last
),
ranked AS (
    SELECT
        'slowest' AS kind,
        *,
        row_number() OVER (PARTITION BY day, app ORDER BY duration_seconds DESC, conversation_name) AS rank
    FROM candidates
    WHERE duration_seconds IS NOT NULL
    UNION ALL BY NAME
    SELECT
        'failing' AS kind,
        *,
        row_number() OVER (
            PARTITION BY day, app
            ORDER BY erroring_tool_calls DESC, duration_seconds DESC NULLS LAST, conversation_name
        ) AS rank
    FROM candidates
    WHERE erroring_tool_calls > 0
)
SELECT day, app, kind, rank, conversation_name, duration_seconds, turn_count, erroring_tool_calls
FROM ranked
WHERE rank <= 3
