-- Turns per conversation and conversation duration (seconds) percentiles per UTC day and app.
-- Turns are turn_count as the API reports it; durations cover ended conversations only.
-- Read from the daily_conversation_length rollup; percentiles are exact over each app's day.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    app,
    conversations,
    ended_conversations,
    round(turns_p50, 2) AS turns_p50,
    round(turns_p90, 2) AS turns_p90,
    round(turns_p99, 2) AS turns_p99,
    round(duration_p50_seconds, 3) AS duration_p50_seconds,
    round(duration_p90_seconds, 3) AS duration_p90_seconds,
    round(duration_p99_seconds, 3) AS duration_p99_seconds
FROM daily_conversation_length
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
ORDER BY day, app;
