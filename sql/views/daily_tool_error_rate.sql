-- Tool calls and tool error rate per tool per day.
-- Grain: one row per (day, tool); tool is the tool resource name, or "{toolset}/{toolId}" for a
-- toolset tool ("{toolset}" without a toolId), as evaluation latencies name it. day is the UTC date of the conversation's start_time. A response counts as an
-- error when its struct has an "error" key.
CREATE OR REPLACE VIEW daily_tool_error_rate AS
SELECT
    CAST(timezone('UTC', c.start_time) AS DATE) AS day,
    coalesce(r.tool, r.toolset || coalesce('/' || r.toolset_tool_id, '')) AS tool,
    count(*) AS responses,
    count(*) FILTER (WHERE r.is_error) AS errors,
    count(*) FILTER (WHERE r.is_error) / count(*) AS error_rate
FROM tool_responses AS r
JOIN conversations AS c USING (conversation_name)
GROUP BY ALL;
