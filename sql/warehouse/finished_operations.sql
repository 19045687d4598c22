-- Operations of an app's evaluation runs stored as done: fetching them again would cost a
-- get_operation call and change nothing.
SELECT operation_name
FROM evaluation_run_operations
WHERE app = $app AND done AND operation_name IS NOT NULL;
