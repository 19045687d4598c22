-- Descriptions of evaluation_expectation_results and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_expectation_results IS 'One row per evaluation expectation (a criterion in words) a result was judged against, with the verdict and its explanation. Key: (evaluation_result_name, expectation_index).';
COMMENT ON COLUMN evaluation_expectation_results.evaluation_result_name IS 'The result judged.';
COMMENT ON COLUMN evaluation_expectation_results.evaluation_run_name IS 'The evaluation run that produced the result.';
COMMENT ON COLUMN evaluation_expectation_results.expectation_index IS 'Position of the expectation among the result''s (0-based).';
COMMENT ON COLUMN evaluation_expectation_results.evaluation_expectation IS 'Resource name of the evaluation expectation.';
COMMENT ON COLUMN evaluation_expectation_results.prompt IS 'The expectation''s criterion, as written.';
COMMENT ON COLUMN evaluation_expectation_results.outcome IS 'PASS, FAIL or SKIPPED (the API enum string).';
COMMENT ON COLUMN evaluation_expectation_results.explanation IS 'Why the expectation was or was not met.';
