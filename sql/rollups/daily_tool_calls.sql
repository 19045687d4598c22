-- How often is each tool called, and how often does it fail, per day?
-- Grain: one row per (day, app, tool); day is the UTC day of the conversation's start_time (the day of its partition).
-- tool is the tool's resource name, or "{toolset}/{toolId}" for a toolset tool ("{toolset}"
-- when the call gave no toolId), as evaluation_run_latencies.subject names it; display_name
-- is its display name when the API gave one, else the last segment of tool.
-- calls counts toolCall chunks, responses toolResponse chunks; a response is an error when its
-- struct has an "error" key. error_rate = errors / responses (NULL without responses).
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
WITH scoped AS (
    SELECT conversation_name, app, partition_date
    FROM conversations
    SEMI JOIN rollup_partitions AS p ON p.app = conversations.app AND p.day = conversations.partition_date
    WHERE partition_date BETWEEN $first AND $last
),
events AS (
    SELECT
        conversation_name,
        coalesce(tool, toolset || coalesce('/' || toolset_tool_id, '')) AS tool,
        display_name,
        'call' AS kind,
        false AS is_error
    FROM tool_calls
    WHERE partition_date BETWEEN $first AND $last
    UNION ALL
    SELECT
        conversation_name,
        coalesce(tool, toolset || coalesce('/' || toolset_tool_id, '')) AS tool,
        display_name,
        'response' AS kind,
        coalesce(is_error, false) AS is_error
    FROM tool_responses
    WHERE partition_date BETWEEN $first AND $last
)
SELECT
    c.partition_date AS day,
    c.app,
    e.tool,
    coalesce(max(e.display_name), regexp_extract(e.tool, '[^/]+$')) AS display_name,
    count(*) FILTER (WHERE e.kind = 'call') AS calls,
    count(*) FILTER (WHERE e.kind = 'response') AS responses,
    count(*) FILTER (WHERE e.is_error) AS errors,
    count(*) FILTER (WHERE e.is_error) / nullif(count(*) FILTER (WHERE e.kind = 'response'), 0) AS error_rate
FROM events AS e
JOIN scoped AS c USING (conversation_name)
GROUP BY c.partition_date, c.app, e.tool
