-- The most common trajectories (tool calls and agent transfers in order) per app and day, with their share of the day's conversations and their duration; '(no tool calls or transfers)' for the conversations without either.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
-- param top INTEGER = 5: trajectories per app and day
SELECT
    day,
    app,
    CASE trajectory WHEN '' THEN '(no tool calls or transfers)' ELSE trajectory END AS trajectory,
    conversations,
    round(conversations / sum(conversations) OVER (PARTITION BY day, app), 4) AS share,
    round(avg_turns, 2) AS avg_turns,
    round(p50_seconds, 3) AS p50_seconds,
    round(p90_seconds, 3) AS p90_seconds
FROM daily_trajectories
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
-- after the share, which counts every row of the day; '(other)' (the conversations beyond the
-- day's 20 most followed trajectories) ranks 21st
QUALIFY rank <= $top
ORDER BY day, app, rank;
