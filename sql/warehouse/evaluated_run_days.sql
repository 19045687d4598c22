-- The days the conversations of the runs just stored can start on, per app: from the day before
-- a run was created (for clocks' skew) to the day it was last fetched.
SELECT
    app,
    min(CAST(timezone('UTC', create_time) AS DATE)) - 1 AS first_day,
    max(CAST(timezone('UTC', greatest(create_time, observed_at)) AS DATE)) AS last_day
FROM incoming_evaluation_runs
SEMI JOIN accepted_evaluation_runs USING (evaluation_run_name)
WHERE app IS NOT NULL AND create_time IS NOT NULL
GROUP BY app;
