-- Descriptions of evaluation_run_summaries and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_run_summaries IS 'One row per entry of an evaluation run''s evaluationRunSummaries: outcome counts per evaluation. Key: (evaluation_run_name, evaluation_name).';
COMMENT ON COLUMN evaluation_run_summaries.evaluation_run_name IS 'Full resource name of the evaluation run (projects/{p}/locations/{l}/apps/{a}/evaluationRuns/{r}).';
COMMENT ON COLUMN evaluation_run_summaries.evaluation_name IS 'Resource name of the evaluation summarised.';
COMMENT ON COLUMN evaluation_run_summaries.passed_count IS 'Results of this evaluation that passed.';
COMMENT ON COLUMN evaluation_run_summaries.failed_count IS 'Results of this evaluation that failed.';
COMMENT ON COLUMN evaluation_run_summaries.error_count IS 'Results of this evaluation that errored.';
