-- Perceived latency (ms, from the root span's attribute) and turn duration percentiles per UTC day.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    count(*) AS turns,
    quantile_cont(TRY_CAST(attributes ->> 'perceived latency (ms)' AS DOUBLE), 0.5) AS perceived_p50_ms,
    quantile_cont(TRY_CAST(attributes ->> 'perceived latency (ms)' AS DOUBLE), 0.9) AS perceived_p90_ms,
    quantile_cont(TRY_CAST(attributes ->> 'perceived latency (ms)' AS DOUBLE), 0.99) AS perceived_p99_ms,
    round(quantile_cont(duration_seconds, 0.5), 4) AS duration_p50_seconds,
    round(quantile_cont(duration_seconds, 0.9), 4) AS duration_p90_seconds,
    round(quantile_cont(duration_seconds, 0.99), 4) AS duration_p99_seconds
FROM component_spans
WHERE component = 'Turn'
    AND ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= $since AND day < $until
GROUP BY day
ORDER BY day;
