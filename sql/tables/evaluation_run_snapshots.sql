-- One row per observed change of an evaluation run's state or progress (append-only). Key: (evaluation_run_name, observed_at).
CREATE TABLE IF NOT EXISTS evaluation_run_snapshots (
    evaluation_run_name VARCHAR,
    observed_at TIMESTAMPTZ,
    state VARCHAR,
    total_count INTEGER,
    passed_count INTEGER,
    failed_count INTEGER,
    error_count INTEGER,
    completed_count INTEGER,
    cancelled_count INTEGER
);
