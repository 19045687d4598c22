-- The window's most followed trajectories per app (summed from each day's 20 most followed), with their share of the window's conversations and mean turns; '(no tool calls or transfers)' for the conversations without either.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
-- param top INTEGER = 10: trajectories per app
WITH in_window AS (
    SELECT app, trajectory, conversations, avg_turns, day
    FROM daily_trajectories
    WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
        AND day >= window_start($since, $until) AND day < $until
),
totals AS (
    SELECT app, sum(conversations) AS total FROM in_window GROUP BY app
)
SELECT
    w.app,
    CASE w.trajectory WHEN '' THEN '(no tool calls or transfers)' ELSE w.trajectory END AS trajectory,
    CAST(sum(w.conversations) AS BIGINT) AS conversations,
    round(sum(w.conversations) / any_value(t.total), 4) AS share,
    round(sum(w.avg_turns * w.conversations) / sum(w.conversations), 2) AS avg_turns,
    count(*) AS days
FROM in_window AS w
JOIN totals AS t USING (app)
WHERE w.trajectory <> '(other)'
GROUP BY w.app, w.trajectory
QUALIFY row_number() OVER (PARTITION BY w.app ORDER BY sum(w.conversations) DESC, w.trajectory) <= $top
ORDER BY w.app, conversations DESC, w.trajectory;
