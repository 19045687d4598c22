-- An app's evaluation runs stored in a final state (COMPLETED, ERROR, CANCELLED), with the
-- results loaded with them: fetching each again and listing its results would cost two calls a
-- run, every fetch, and change nothing.
SELECT evaluation_run_name
FROM evaluation_runs
WHERE app = $app AND state IN ('COMPLETED', 'ERROR', 'CANCELLED');
