-- Remove each stored evaluation run operation that an incoming fetch of the same run's
-- operation, made no earlier, replaces.
DELETE FROM evaluation_run_operations AS o
USING incoming_evaluation_run_operations AS i
WHERE o.evaluation_run_name = i.evaluation_run_name AND o.observed_at <= i.observed_at;
