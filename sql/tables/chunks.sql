-- One row per message chunk. Key: (conversation_name, turn_index, message_index, chunk_index).
CREATE TABLE IF NOT EXISTS chunks (
    conversation_name VARCHAR,
    turn_index INTEGER,
    message_index INTEGER,
    chunk_index INTEGER,
    chunk_type VARCHAR,
    text VARCHAR,
    mime_type VARCHAR,
    data_bytes BIGINT,
    alt_text VARCHAR,
    payload JSON,
    partition_date DATE
);
