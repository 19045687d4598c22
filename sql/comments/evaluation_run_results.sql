-- Descriptions of evaluation_run_results and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_run_results IS 'One row per evaluation result name a run lists (its evaluationResults). Key: (evaluation_run_name, result_index).';
COMMENT ON COLUMN evaluation_run_results.evaluation_run_name IS 'Full resource name of the evaluation run (projects/{p}/locations/{l}/apps/{a}/evaluationRuns/{r}).';
COMMENT ON COLUMN evaluation_run_results.result_index IS '0-based position in the run''s evaluationResults list.';
COMMENT ON COLUMN evaluation_run_results.evaluation_result_name IS 'Resource name of the evaluation result.';
