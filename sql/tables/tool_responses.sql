-- One row per toolResponse chunk. Key: (conversation_name, turn_index, message_index, chunk_index).
-- is_error is true exactly when the response struct has an "error" key.
CREATE TABLE IF NOT EXISTS tool_responses (
    conversation_name VARCHAR,
    turn_index INTEGER,
    message_index INTEGER,
    chunk_index INTEGER,
    tool_call_id VARCHAR,
    tool VARCHAR,
    toolset VARCHAR,
    toolset_tool_id VARCHAR,
    display_name VARCHAR,
    response JSON,
    is_error BOOLEAN,
    parent_tool_call_id VARCHAR,
    agent_name VARCHAR,
    target_app VARCHAR,
    partition_date DATE
);
