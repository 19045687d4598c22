-- Add the newest incoming operation of each evaluation run that has none stored now (stored ones
-- newer than the incoming fetch stay: an older observation never overwrites a newer one).
INSERT INTO evaluation_run_operations BY NAME
SELECT i.*
FROM incoming_evaluation_run_operations AS i
ANTI JOIN evaluation_run_operations AS o USING (evaluation_run_name)
QUALIFY row_number() OVER (PARTITION BY i.evaluation_run_name ORDER BY i.observed_at DESC) = 1;
