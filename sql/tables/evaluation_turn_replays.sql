-- One row per replayed turn of a golden evaluation result: the conversation it replayed, its latency and error. Key: (evaluation_result_name, turn_index).
CREATE TABLE IF NOT EXISTS evaluation_turn_replays (
    evaluation_result_name VARCHAR,
    evaluation_run_name VARCHAR,
    turn_index INTEGER,
    conversation_name VARCHAR,
    turn_latency_seconds DOUBLE,
    error_type VARCHAR,
    error_message VARCHAR,
    error_session_id VARCHAR,
    user_facing_error_message VARCHAR
);
