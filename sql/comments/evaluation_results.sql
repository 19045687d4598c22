-- Descriptions of evaluation_results and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_results IS 'One row per evaluation result (PASS/FAIL/SKIPPED, execution state). Key: evaluation_result_name.';
COMMENT ON COLUMN evaluation_results.evaluation_result_name IS 'Full resource name of the result (.../evaluations/{e}/results/{r}).';
COMMENT ON COLUMN evaluation_results.evaluation_run_name IS 'Resource name of the run that produced the result.';
COMMENT ON COLUMN evaluation_results.evaluation_name IS 'Resource name of the evaluation the result belongs to.';
COMMENT ON COLUMN evaluation_results.display_name IS 'Display name of the result.';
COMMENT ON COLUMN evaluation_results.create_time IS 'When the result was created (UTC).';
COMMENT ON COLUMN evaluation_results.evaluation_status IS 'Outcome: PASS, FAIL or SKIPPED (the API enum string).';
COMMENT ON COLUMN evaluation_results.execution_state IS 'Execution state: RUNNING, COMPLETED or ERROR.';
COMMENT ON COLUMN evaluation_results.result_type IS 'golden or scenario: which kind of result the API returned.';
COMMENT ON COLUMN evaluation_results.persona IS 'Resource name of the persona used.';
COMMENT ON COLUMN evaluation_results.app_version IS 'Resource name of the app version evaluated.';
COMMENT ON COLUMN evaluation_results.initiated_by IS 'Who started the evaluation.';
COMMENT ON COLUMN evaluation_results.error_type IS 'errorInfo.errorType of an errored result.';
COMMENT ON COLUMN evaluation_results.error_message IS 'errorInfo.errorMessage (or the deprecated error Status message).';
COMMENT ON COLUMN evaluation_results.app_version_display_name IS 'Display name of the app version evaluated.';
COMMENT ON COLUMN evaluation_results.changelog IS 'Changelog of the app version evaluated.';
COMMENT ON COLUMN evaluation_results.golden_run_method IS 'How a golden result was replayed: STABLE or NAIVE (the API enum string); NULL for scenario results.';
COMMENT ON COLUMN evaluation_results.evaluation_metrics_thresholds IS 'The metric thresholds the result was judged by (EvaluationMetricsThresholds as JSON).';
