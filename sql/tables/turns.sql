-- One row per turn. Key: (conversation_name, turn_index).
CREATE TABLE IF NOT EXISTS turns (
    conversation_name VARCHAR,
    turn_index INTEGER,
    user_intended_text VARCHAR,
    message_count INTEGER,
    span_count INTEGER,
    start_time TIMESTAMPTZ,
    duration_seconds DOUBLE,
    partition_date DATE
);
