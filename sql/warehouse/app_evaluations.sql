-- The evaluations and evaluation datasets (by id) that the loaded runs of $app covered: what
-- `evaluate` offers when it is not told which to run.
SELECT '--evaluations' AS option, string_split(e.evaluation_name, '/')[-1] AS id
FROM evaluation_run_evaluations AS e
JOIN evaluation_runs AS r USING (evaluation_run_name)
WHERE r.app = $app
UNION
SELECT '--dataset', string_split(evaluation_dataset, '/')[-1]
FROM evaluation_runs
WHERE app = $app AND evaluation_dataset IS NOT NULL
ORDER BY option DESC, id;
