-- One row per evaluation run's long-running operation (run_evaluation's), as last fetched with
-- get_operation: when it was created and when it ended, so run durations can be charted.
-- Key: (evaluation_run_name).
CREATE TABLE IF NOT EXISTS evaluation_run_operations (
    evaluation_run_name VARCHAR,
    app VARCHAR,
    operation_name VARCHAR,
    done BOOLEAN,
    create_time TIMESTAMPTZ,
    end_time TIMESTAMPTZ,
    verb VARCHAR,
    cancel_requested BOOLEAN,
    error_code INTEGER,
    error_message VARCHAR,
    observed_at TIMESTAMPTZ
);
