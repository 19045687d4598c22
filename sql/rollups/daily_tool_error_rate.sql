-- Tool calls and tool error rate per tool per day.
-- Grain: one row per (day, app, tool); tool is the tool resource name, or "{toolset}/{toolId}"
-- for a toolset tool ("{toolset}" without a toolId), as evaluation latencies name it. day is the
-- UTC day of the conversation's start_time (the day of its partition). A response counts as an
-- error when its struct has an "error" key.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    c.partition_date AS day,
    c.app,
    coalesce(r.tool, r.toolset || coalesce('/' || r.toolset_tool_id, '')) AS tool,
    count(*) AS responses,
    count(*) FILTER (WHERE r.is_error) AS errors,
    count(*) FILTER (WHERE r.is_error) / count(*) AS error_rate
FROM tool_responses AS r
JOIN conversations AS c USING (conversation_name)
SEMI JOIN rollup_partitions AS p ON p.app = c.app AND p.day = c.partition_date
WHERE r.partition_date BETWEEN $first AND $last AND c.partition_date BETWEEN $first AND $last
GROUP BY ALL
