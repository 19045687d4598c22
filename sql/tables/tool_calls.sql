-- One row per toolCall chunk. Key: (conversation_name, turn_index, message_index, chunk_index).
CREATE TABLE IF NOT EXISTS tool_calls (
    conversation_name VARCHAR,
    turn_index INTEGER,
    message_index INTEGER,
    chunk_index INTEGER,
    tool_call_id VARCHAR,
    tool VARCHAR,
    toolset VARCHAR,
    toolset_tool_id VARCHAR,
    display_name VARCHAR,
    args JSON,
    parent_tool_call_id VARCHAR,
    agent_name VARCHAR,
    target_app VARCHAR,
    partition_date DATE
);
