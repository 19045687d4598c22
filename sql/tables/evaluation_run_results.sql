-- One row per evaluation result name a run lists (its `evaluationResults`). Key: (evaluation_run_name, result_index).
CREATE TABLE IF NOT EXISTS evaluation_run_results (
    evaluation_run_name VARCHAR,
    result_index INTEGER,
    evaluation_result_name VARCHAR
);
