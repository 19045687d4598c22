-- Descriptions of evaluation_run_operations and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_run_operations IS 'One row per evaluation run''s long-running operation (from run_evaluation), as last fetched with get_operation once the run was final: its create and end times give the run''s duration. Key: (evaluation_run_name).';
COMMENT ON COLUMN evaluation_run_operations.evaluation_run_name IS 'Full resource name of the evaluation run the operation created (metadata.evaluationRun, else response.evaluationRun).';
COMMENT ON COLUMN evaluation_run_operations.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN evaluation_run_operations.operation_name IS 'Resource name of the operation (projects/{p}/locations/{l}/operations/{o}).';
COMMENT ON COLUMN evaluation_run_operations.done IS 'Whether the operation had completed when fetched.';
COMMENT ON COLUMN evaluation_run_operations.create_time IS 'When the operation was created (metadata.createTime, UTC).';
COMMENT ON COLUMN evaluation_run_operations.end_time IS 'When the operation completed (metadata.endTime, UTC); NULL while it runs.';
COMMENT ON COLUMN evaluation_run_operations.verb IS 'The operation''s verb (metadata.verb).';
COMMENT ON COLUMN evaluation_run_operations.cancel_requested IS 'Whether cancellation was requested (metadata.cancelRequested).';
COMMENT ON COLUMN evaluation_run_operations.error_code IS 'google.rpc.Code of the operation''s error (1 CANCELLED, 13 INTERNAL, …); NULL when it succeeded or runs.';
COMMENT ON COLUMN evaluation_run_operations.error_message IS 'Message of the operation''s error, if any.';
COMMENT ON COLUMN evaluation_run_operations.observed_at IS 'When the operation was fetched (UTC); a newer fetch replaces an older one.';
