-- Descriptions of evaluation_run_evaluations and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_run_evaluations IS 'One row per evaluation a run covers (its evaluations list). Key: (evaluation_run_name, evaluation_index).';
COMMENT ON COLUMN evaluation_run_evaluations.evaluation_run_name IS 'Full resource name of the evaluation run (projects/{p}/locations/{l}/apps/{a}/evaluationRuns/{r}).';
COMMENT ON COLUMN evaluation_run_evaluations.evaluation_index IS '0-based position in the run''s evaluations list.';
COMMENT ON COLUMN evaluation_run_evaluations.evaluation_name IS 'Resource name of the evaluation.';
