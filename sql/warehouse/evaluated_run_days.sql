-- The (app, day) partitions the conversations of the runs just stored can start on: per app,
-- every day from the day before a run was created (for clocks' skew) to the day it was last fetched.
SELECT app, CAST(unnest(generate_series(first_day, last_day, INTERVAL 1 DAY)) AS DATE) AS day
FROM (
    SELECT
        app,
        min(CAST(timezone('UTC', create_time) AS DATE)) - 1 AS first_day,
        max(CAST(timezone('UTC', greatest(create_time, observed_at)) AS DATE)) AS last_day
    FROM incoming_evaluation_runs
    SEMI JOIN accepted_evaluation_runs USING (evaluation_run_name)
    WHERE app IS NOT NULL AND create_time IS NOT NULL
    GROUP BY app
)
ORDER BY app, day;
