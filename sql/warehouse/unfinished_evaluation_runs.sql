-- Evaluation runs not yet in a final state (COMPLETED, ERROR, CANCELLED): the ones to fetch
-- again. A state this version does not know (one added to the API later) counts as unfinished
-- until the run reaches a final one, so no run stops being followed too early.
SELECT app, evaluation_run_name
FROM evaluation_runs
WHERE state IS NULL OR state NOT IN ('COMPLETED', 'ERROR', 'CANCELLED')
ORDER BY app, evaluation_run_name;
