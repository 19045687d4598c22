-- One row per agentTransfer chunk. Key: (conversation_name, turn_index, message_index, chunk_index).
CREATE TABLE IF NOT EXISTS agent_transfers (
    conversation_name VARCHAR,
    turn_index INTEGER,
    message_index INTEGER,
    chunk_index INTEGER,
    target_agent VARCHAR,
    display_name VARCHAR,
    partition_date DATE
);
