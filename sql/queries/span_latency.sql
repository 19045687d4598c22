-- Latency percentiles (seconds) per span name per UTC day and app, slowest p90 first within each.
-- Read from the daily_span_latency rollup; percentiles are exact over each app's day.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    app,
    span_name,
    component,
    spans,
    round(p50_seconds, 4) AS p50_seconds,
    round(p90_seconds, 4) AS p90_seconds,
    round(p99_seconds, 4) AS p99_seconds
FROM daily_span_latency
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
ORDER BY day, app, p90_seconds DESC, span_name;
