-- The incoming runs that replace what is stored: new runs, and runs observed no earlier than
-- their stored version (an older observation, e.g. a late retry, never overwrites a newer one).
CREATE OR REPLACE TEMP TABLE accepted_evaluation_runs AS
SELECT i.evaluation_run_name
FROM incoming_evaluation_runs AS i
LEFT JOIN evaluation_runs AS e USING (evaluation_run_name)
WHERE e.observed_at IS NULL OR e.observed_at <= i.observed_at;
