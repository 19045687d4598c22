-- Append an evaluation run snapshot only when it is newer than the run's latest stored
-- snapshot and its state or progress differs: re-loading the same observation, or observing
-- an unchanged run, adds nothing.
INSERT INTO evaluation_run_snapshots BY NAME
SELECT s.*
FROM incoming_evaluation_run_snapshots AS s
LEFT JOIN (
    SELECT
        evaluation_run_name,
        max(observed_at) AS observed_at,
        arg_max(
            (state, total_count, passed_count, failed_count, error_count, completed_count, cancelled_count),
            observed_at
        ) AS progress
    FROM evaluation_run_snapshots
    GROUP BY evaluation_run_name
) AS latest USING (evaluation_run_name)
WHERE latest.observed_at IS NULL
   OR (
       latest.observed_at < s.observed_at
       AND latest.progress IS DISTINCT FROM (
           s.state, s.total_count, s.passed_count, s.failed_count, s.error_count, s.completed_count, s.cancelled_count
       )
   );
