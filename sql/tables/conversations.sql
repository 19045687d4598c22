-- One row per conversation. Key: conversation_name.
CREATE TABLE IF NOT EXISTS conversations (
    conversation_name VARCHAR,
    app VARCHAR,
    conversation_id VARCHAR,
    start_time TIMESTAMPTZ,
    end_time TIMESTAMPTZ,
    duration_seconds DOUBLE,
    turn_count INTEGER,
    source VARCHAR,
    channel_type VARCHAR,
    input_types VARCHAR[],
    entry_agent VARCHAR,
    deployment VARCHAR,
    app_version VARCHAR,
    language_code VARCHAR,
    partition_date DATE
);
