-- Every tool response of the given conversations that was an error, with the call it answered.
-- Joined on the conversations' partitions, so only their days' row groups are read.
WITH wanted AS (
    SELECT conversation_name, partition_date FROM conversations WHERE conversation_name IN (SELECT unnest($conversations))
)
SELECT
    r.conversation_name,
    r.turn_index,
    coalesce(r.display_name, r.tool, r.toolset_tool_id) AS tool,
    c.args,
    r.response
FROM tool_responses AS r
SEMI JOIN wanted AS w USING (conversation_name, partition_date)
LEFT JOIN (
    SELECT t.* FROM tool_calls AS t SEMI JOIN wanted AS w USING (conversation_name, partition_date)
) AS c ON c.conversation_name = r.conversation_name AND c.tool_call_id = r.tool_call_id
WHERE r.is_error
ORDER BY r.conversation_name, r.turn_index, r.message_index, r.chunk_index;
