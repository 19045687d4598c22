-- Descriptions of evaluation_run_errors and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_run_errors IS 'One row per evaluation run with an error: its errorInfo and the deprecated error Status. Key: evaluation_run_name.';
COMMENT ON COLUMN evaluation_run_errors.evaluation_run_name IS 'Full resource name of the evaluation run (projects/{p}/locations/{l}/apps/{a}/evaluationRuns/{r}).';
COMMENT ON COLUMN evaluation_run_errors.error_type IS 'errorInfo.errorType.';
COMMENT ON COLUMN evaluation_run_errors.error_message IS 'errorInfo.errorMessage.';
COMMENT ON COLUMN evaluation_run_errors.session_id IS 'errorInfo.sessionId: the session that failed.';
COMMENT ON COLUMN evaluation_run_errors.user_facing_error_message IS 'errorInfo.userFacingErrorMessage.';
COMMENT ON COLUMN evaluation_run_errors.status_code IS 'Code of the deprecated error Status.';
COMMENT ON COLUMN evaluation_run_errors.status_message IS 'Message of the deprecated error Status.';
COMMENT ON COLUMN evaluation_run_errors.status_details IS 'Details of the deprecated error Status (JSON).';
