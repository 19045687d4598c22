-- One row per evaluation a run covers (its `evaluations` list). Key: (evaluation_run_name, evaluation_index).
CREATE TABLE IF NOT EXISTS evaluation_run_evaluations (
    evaluation_run_name VARCHAR,
    evaluation_index INTEGER,
    evaluation_name VARCHAR
);
