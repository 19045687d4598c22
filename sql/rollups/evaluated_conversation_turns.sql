-- The conversations evaluation results replayed or simulated, turn by turn: what an evaluation
-- failure drills into (its turn's slowest span, erroring tool call and tool calls) without
-- reading the conversation tables, whose whole history a day known only from the runs would scan.
-- Grain: one row per (day, app, conversation_name, turn_index) of each conversation named by
-- evaluation_turn_replays or evaluation_scenario_results and loaded, and one row per such
-- conversation with turn_index NULL for all its turns; day is the UTC day of the conversation's
-- start_time (the day of its partition). A turn has a row when it has a span below its root, an
-- erroring tool response or a tool call.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction; an
-- evaluation load computes those of the days its runs' conversations can start on (the day before
-- a run was created to the day it was last fetched).
WITH evaluated AS (
    SELECT conversation_name FROM evaluation_turn_replays
    UNION
    SELECT conversation_name FROM evaluation_scenario_results
),
scoped AS (
    SELECT c.partition_date AS day, c.app, c.conversation_name
    FROM conversations AS c
    SEMI JOIN rollup_partitions AS p ON p.app = c.app AND p.day = c.partition_date
    WHERE c.partition_date BETWEEN $first AND $last
        AND c.conversation_name IN (SELECT conversation_name FROM evaluated)
),
turn_spans AS (
    SELECT
        conversation_name,
        turn_index,
        arg_max(name, duration_seconds) AS slowest_span,
        max(duration_seconds) AS slowest_span_seconds
    FROM spans
    SEMI JOIN scoped USING (conversation_name)
    WHERE depth > 0  -- a turn's root span is the turn itself: the slowest part is below it
        AND partition_date BETWEEN $first AND $last
    GROUP BY GROUPING SETS ((conversation_name, turn_index), (conversation_name))
),
turn_errors AS (
    SELECT
        conversation_name,
        turn_index,
        arg_min(coalesce(tool, toolset || '/' || toolset_tool_id), (turn_index, message_index, chunk_index))
            AS erroring_tool,
        arg_min(response, (turn_index, message_index, chunk_index)) AS erroring_response
    FROM tool_responses
    SEMI JOIN scoped USING (conversation_name)
    WHERE is_error AND partition_date BETWEEN $first AND $last
    GROUP BY GROUPING SETS ((conversation_name, turn_index), (conversation_name))
),
turn_calls AS (
    SELECT
        conversation_name,
        turn_index,
        list(
            coalesce(tool, toolset || '/' || toolset_tool_id, toolset) ORDER BY turn_index, message_index, chunk_index
        ) AS tool_calls
    FROM tool_calls
    SEMI JOIN scoped USING (conversation_name)
    WHERE partition_date BETWEEN $first AND $last
    GROUP BY GROUPING SETS ((conversation_name, turn_index), (conversation_name))
),
turns_found AS (
    SELECT conversation_name, turn_index FROM turn_spans
    UNION
    SELECT conversation_name, turn_index FROM turn_errors
    UNION
    SELECT conversation_name, turn_index FROM turn_calls
    UNION
    SELECT conversation_name, NULL FROM scoped
)
SELECT
    s.day,
    s.app,
    t.conversation_name,
    t.turn_index,
    sp.slowest_span,
    sp.slowest_span_seconds,
    e.erroring_tool,
    e.erroring_response,
    coalesce(c.tool_calls, []) AS tool_calls
FROM turns_found AS t
JOIN scoped AS s USING (conversation_name)
LEFT JOIN turn_spans AS sp
    ON sp.conversation_name = t.conversation_name AND sp.turn_index IS NOT DISTINCT FROM t.turn_index
LEFT JOIN turn_errors AS e
    ON e.conversation_name = t.conversation_name AND e.turn_index IS NOT DISTINCT FROM t.turn_index
LEFT JOIN turn_calls AS c
    ON c.conversation_name = t.conversation_name AND c.turn_index IS NOT DISTINCT FROM t.turn_index
