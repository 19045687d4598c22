-- The (app, UTC day) of the evaluation runs just stored: the days whose evaluation pass rate they change.
SELECT DISTINCT app, CAST(timezone('UTC', create_time) AS DATE) AS day
FROM incoming_evaluation_runs
SEMI JOIN accepted_evaluation_runs USING (evaluation_run_name)
WHERE app IS NOT NULL AND create_time IS NOT NULL;
