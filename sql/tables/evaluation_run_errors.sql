-- One row per evaluation run with an error: its errorInfo and the deprecated error Status. Key: (evaluation_run_name).
CREATE TABLE IF NOT EXISTS evaluation_run_errors (
    evaluation_run_name VARCHAR,
    error_type VARCHAR,
    error_message VARCHAR,
    session_id VARCHAR,
    user_facing_error_message VARCHAR,
    status_code INTEGER,
    status_message VARCHAR,
    status_details JSON
);
