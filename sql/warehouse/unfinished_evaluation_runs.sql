-- Evaluation runs not yet in a final state (COMPLETED, ERROR, CANCELLED): the ones to fetch
-- again. A state this version does not know (one added to the API later) counts as unfinished
-- until the run reaches a final one, so no run stops being followed too early. A run that CES
-- said does not exist since it was last seen (deleted: a reject of $source whose reason starts
-- with $refused, on or after the day it was last seen) is no longer followed.
SELECT app, evaluation_run_name
FROM evaluation_runs AS run
WHERE (state IS NULL OR state NOT IN ('COMPLETED', 'ERROR', 'CANCELLED'))
    AND NOT EXISTS (
        SELECT 1
        FROM rejects
        WHERE rejects.source = $source
            AND rejects.resource_name = run.evaluation_run_name
            AND starts_with(rejects.reason, $refused)
            AND rejects.partition_date >= CAST(run.observed_at AS DATE)
    )
ORDER BY app, evaluation_run_name;
