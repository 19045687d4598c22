-- One row per evaluation result of a run (status PASS/FAIL/SKIPPED, execution state). Key: (evaluation_result_name).
CREATE TABLE IF NOT EXISTS evaluation_results (
    evaluation_result_name VARCHAR,
    evaluation_run_name VARCHAR,
    evaluation_name VARCHAR,
    display_name VARCHAR,
    create_time TIMESTAMPTZ,
    evaluation_status VARCHAR,
    execution_state VARCHAR,
    result_type VARCHAR,
    persona VARCHAR,
    app_version VARCHAR,
    initiated_by VARCHAR,
    error_type VARCHAR,
    error_message VARCHAR,
    app_version_display_name VARCHAR,
    changelog VARCHAR,
    golden_run_method VARCHAR,
    evaluation_metrics_thresholds JSON
);
