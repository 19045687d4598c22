-- Every tool response of the given conversations that was an error, with the call it answered.
SELECT
    r.conversation_name,
    r.turn_index,
    coalesce(r.display_name, r.tool, r.toolset_tool_id) AS tool,
    c.args,
    r.response
FROM tool_responses AS r
LEFT JOIN tool_calls AS c
    ON c.conversation_name = r.conversation_name AND c.tool_call_id = r.tool_call_id
WHERE r.is_error AND r.conversation_name IN (SELECT unnest($conversations))
ORDER BY r.conversation_name, r.turn_index, r.message_index, r.chunk_index;
