-- Evaluation runs not yet COMPLETED, ERROR or CANCELLED: the ones to fetch again.
SELECT app, evaluation_run_name
FROM evaluation_runs
WHERE state IS NULL OR state IN ('QUEUED', 'RUNNING', 'EVALUATION_RUN_STATE_UNSPECIFIED')
ORDER BY app, evaluation_run_name;
