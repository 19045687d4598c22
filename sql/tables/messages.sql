-- One row per message. Key: (conversation_name, turn_index, message_index);
-- turn_index is NULL for the deprecated top-level messages of a conversation without turns
-- (with turns, those repeat the turns' messages and are not loaded twice).
CREATE TABLE IF NOT EXISTS messages (
    conversation_name VARCHAR,
    turn_index INTEGER,
    message_index INTEGER,
    role VARCHAR,
    event_time TIMESTAMPTZ,
    chunk_count INTEGER,
    partition_date DATE
);
