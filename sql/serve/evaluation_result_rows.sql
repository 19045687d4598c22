-- The rows of {table} that belong to one evaluation result, in key order ({key}).
SELECT * EXCLUDE (evaluation_result_name, evaluation_run_name)
FROM {table}
WHERE evaluation_result_name = $name
ORDER BY {key};
