-- Latency percentiles (seconds) per span name, slowest p90 first.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    name AS span_name,
    any_value(component) AS component,
    count(*) AS spans,
    round(quantile_cont(duration_seconds, 0.5), 4) AS p50_seconds,
    round(quantile_cont(duration_seconds, 0.9), 4) AS p90_seconds,
    round(quantile_cont(duration_seconds, 0.99), 4) AS p99_seconds
FROM component_spans
WHERE duration_seconds IS NOT NULL
    AND ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= $since AND day < $until
GROUP BY name
ORDER BY p90_seconds DESC, span_name;
