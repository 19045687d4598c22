-- Append the rows of {relation} that belong to an accepted evaluation run to {table}.
INSERT INTO {table} BY NAME
SELECT * FROM {relation}
WHERE evaluation_run_name IN (SELECT evaluation_run_name FROM accepted_evaluation_runs);
