-- Turns per conversation and conversation duration (seconds) percentiles per UTC day.
-- Turns are turn_count as the API reports it; durations cover ended conversations only.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    CAST(timezone('UTC', start_time) AS DATE) AS day,
    count(*) AS conversations,
    count(duration_seconds) AS ended_conversations,
    quantile_cont(turn_count, 0.5) AS turns_p50,
    quantile_cont(turn_count, 0.9) AS turns_p90,
    quantile_cont(turn_count, 0.99) AS turns_p99,
    round(quantile_cont(duration_seconds, 0.5), 3) AS duration_p50_seconds,
    round(quantile_cont(duration_seconds, 0.9), 3) AS duration_p90_seconds,
    round(quantile_cont(duration_seconds, 0.99), 3) AS duration_p99_seconds
FROM conversations
WHERE start_time IS NOT NULL
    AND ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND CAST(timezone('UTC', start_time) AS DATE) >= $since
    AND CAST(timezone('UTC', start_time) AS DATE) < $until
GROUP BY day
ORDER BY day;
