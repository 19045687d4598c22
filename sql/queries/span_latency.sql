-- Latency percentiles (seconds) per span name over the whole warehouse, slowest p90 first.
SELECT
    name AS span_name,
    count(*) AS spans,
    round(quantile_cont(duration_seconds, 0.5), 4) AS p50_seconds,
    round(quantile_cont(duration_seconds, 0.9), 4) AS p90_seconds,
    round(quantile_cont(duration_seconds, 0.99), 4) AS p99_seconds
FROM spans
WHERE duration_seconds IS NOT NULL
GROUP BY name
ORDER BY p90_seconds DESC;
