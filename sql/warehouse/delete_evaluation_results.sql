-- Remove the stored results of the evaluation runs being replaced.
DELETE FROM evaluation_results
WHERE evaluation_run_name IN (SELECT evaluation_run_name FROM accepted_evaluation_runs);
