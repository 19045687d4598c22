-- Perceived latency (ms, from the root span's attribute) and turn duration percentiles per UTC day and app.
-- Read from the daily_turn_latency rollup; percentiles are exact over each app's day.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    app,
    turns,
    round(perceived_p50_ms, 1) AS perceived_p50_ms,
    round(perceived_p90_ms, 1) AS perceived_p90_ms,
    round(perceived_p99_ms, 1) AS perceived_p99_ms,
    round(duration_p50_seconds, 4) AS duration_p50_seconds,
    round(duration_p90_seconds, 4) AS duration_p90_seconds,
    round(duration_p99_seconds, 4) AS duration_p99_seconds
FROM daily_turn_latency
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
ORDER BY day, app;
