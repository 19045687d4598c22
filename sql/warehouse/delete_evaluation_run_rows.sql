-- Remove every row of {table} that belongs to an evaluation run being replaced.
DELETE FROM {table} WHERE evaluation_run_name IN (SELECT evaluation_run_name FROM accepted_evaluation_runs);
