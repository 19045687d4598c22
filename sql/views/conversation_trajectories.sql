-- Which tool calls and agent transfers did each conversation make, in order?
-- Grain: one row per conversation, with its app and day (the UTC day of its start_time, the day
-- of its partition: filter on it to read only those days).
-- steps: the conversation's tool calls, by display name (else the toolset's tool id, else the
-- tool's id), and its agent transfers, as "transfer:" and the target's display name (else its
-- id), ordered by turn, message and chunk; trajectory: the steps joined by " > ", '' for none.
CREATE OR REPLACE VIEW conversation_trajectories AS
WITH steps AS (
    SELECT
        conversation_name,
        partition_date,
        turn_index,
        message_index,
        chunk_index,
        coalesce(display_name, toolset_tool_id, split_part(tool, '/', -1)) AS step,
        true AS is_tool
    FROM tool_calls
    UNION ALL
    SELECT
        conversation_name,
        partition_date,
        turn_index,
        message_index,
        chunk_index,
        'transfer:' || coalesce(display_name, split_part(target_agent, '/', -1)) AS step,
        false AS is_tool
    FROM agent_transfers
),
ordered AS (
    SELECT
        conversation_name,
        partition_date,
        list(step ORDER BY turn_index NULLS FIRST, message_index, chunk_index) AS steps,
        count(*) FILTER (WHERE is_tool) AS tool_calls,
        count(*) FILTER (WHERE NOT is_tool) AS transfers
    FROM steps
    GROUP BY conversation_name, partition_date
)
SELECT
    c.conversation_name,
    c.app,
    c.partition_date AS day,
    coalesce(o.steps, []) AS steps,
    array_to_string(coalesce(o.steps, []), ' > ') AS trajectory,
    coalesce(o.tool_calls, 0) AS tool_calls,
    coalesce(o.transfers, 0) AS transfers,
    c.turn_count,
    c.duration_seconds
FROM conversations AS c
LEFT JOIN ordered AS o USING (conversation_name, partition_date)
