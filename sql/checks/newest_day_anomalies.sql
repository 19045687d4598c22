-- The anomalous metrics (metric_anomalies_in: those days only) of each app's newest complete day
-- among those loaded: the apps of the run ($apps), their newest day up to $last (the run's last
-- day, or yesterday when the run reaches today, which is not over yet). Expect none; a day found warns.
-- Returns one row: how many, and up to 10 of them.
WITH newest AS (
    SELECT app, max(day) AS day
    FROM daily_conversations
    WHERE list_contains($apps, app) AND day <= $last
    GROUP BY app
)
SELECT count(*) AS failures, list(anomaly ORDER BY abs(z) DESC NULLS FIRST)[1:10] AS sample
FROM (
    SELECT
        struct_pack(app, day := CAST(day AS VARCHAR), metric, value, baseline_median, z := round(z, 2)) AS anomaly,
        z
    FROM metric_anomalies_in((SELECT min(day) FROM newest), (SELECT max(day) FROM newest) + 1, NULL)
    SEMI JOIN newest USING (app, day)
    WHERE anomalous
);
