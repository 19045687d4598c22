-- What the warehouse holds of each app: its first and newest day with conversations, the days between them without any, and of those the days no load fetched (the others were quiet), the newest day a load fetched, its conversations and those still open, its evaluation runs and when the newest was created, and its rejects.
-- Read from the daily rollup, the loaded partitions, the evaluation runs and the rejects: it costs apps and days, not conversations.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
WITH conversation_days AS (
    SELECT app, day, sum(conversations) AS conversations, sum(in_progress) AS in_progress
    FROM daily_conversations
    WHERE $app IS NULL OR $app IN (app, split_part(app, '/', 6))
    GROUP BY app, day
),
days AS (
    SELECT
        app,
        min(day) AS first_day,
        max(day) AS newest_day,
        count(*) AS days,
        CAST(sum(conversations) AS BIGINT) AS conversations,
        CAST(sum(in_progress) AS BIGINT) AS in_progress
    FROM conversation_days
    GROUP BY app
),
loaded AS (
    -- a day loaded before loaded_partitions was kept holds conversations, or counts as not loaded
    SELECT
        l.app,
        max(l.partition_date) AS newest_loaded_day,
        count(*) FILTER (WHERE l.partition_date BETWEEN d.first_day AND d.newest_day AND c.day IS NULL) AS quiet_days
    FROM loaded_partitions AS l
    LEFT JOIN days AS d USING (app)
    LEFT JOIN conversation_days AS c ON c.app = l.app AND c.day = l.partition_date
    WHERE $app IS NULL OR $app IN (l.app, split_part(l.app, '/', 6))
    GROUP BY l.app
),
runs AS (
    SELECT app, count(*) AS evaluation_runs, max(create_time) AS newest_evaluation_run
    FROM evaluation_runs
    WHERE $app IS NULL OR $app IN (app, split_part(app, '/', 6))
    GROUP BY app
),
rejected AS (
    SELECT app, count(*) AS rejects
    FROM rejects
    WHERE $app IS NULL OR $app IN (app, split_part(app, '/', 6))
    GROUP BY app
)
SELECT
    app,
    first_day,
    newest_day,
    CAST(coalesce(days, 0) AS BIGINT) AS days_with_conversations,
    CAST(coalesce(datediff('day', first_day, newest_day) + 1 - days, 0) AS BIGINT) AS days_without_conversations,
    CAST(coalesce(datediff('day', first_day, newest_day) + 1 - days - coalesce(quiet_days, 0), 0) AS BIGINT) AS days_not_loaded,
    greatest(newest_loaded_day, newest_day) AS newest_loaded_day,
    coalesce(conversations, 0) AS conversations,
    coalesce(in_progress, 0) AS in_progress,
    coalesce(evaluation_runs, 0) AS evaluation_runs,
    newest_evaluation_run,
    coalesce(rejects, 0) AS rejects
FROM days
FULL JOIN loaded USING (app)
FULL JOIN runs USING (app)
FULL JOIN rejected USING (app)
WHERE app IS NOT NULL
ORDER BY app;
