-- One row per entry of an evaluation run's evaluationRunSummaries. Key: (evaluation_run_name, evaluation_name).
CREATE TABLE IF NOT EXISTS evaluation_run_summaries (
    evaluation_run_name VARCHAR,
    evaluation_name VARCHAR,
    passed_count INTEGER,
    failed_count INTEGER,
    error_count INTEGER
);
