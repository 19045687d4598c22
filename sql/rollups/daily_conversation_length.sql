-- How long are conversations, in turns and in seconds, and how is that changing day by day?
-- Grain: one row per (day, app); day is the UTC day of the conversation's start_time (the day of its partition).
-- Turn percentiles use turn_count as the API reports it, over every conversation; duration
-- percentiles use duration_seconds (end_time - start_time) over the ended conversations only.
-- Percentiles are exact and interpolated (quantile_cont).
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    partition_date AS day,
    app,
    count(*) AS conversations,
    count(duration_seconds) AS ended_conversations,
    avg(turn_count) AS turns_avg,
    quantile_cont(turn_count, 0.5) AS turns_p50,
    quantile_cont(turn_count, 0.9) AS turns_p90,
    quantile_cont(turn_count, 0.99) AS turns_p99,
    max(turn_count) AS turns_max,
    avg(duration_seconds) AS duration_avg_seconds,
    quantile_cont(duration_seconds, 0.5) AS duration_p50_seconds,
    quantile_cont(duration_seconds, 0.9) AS duration_p90_seconds,
    quantile_cont(duration_seconds, 0.99) AS duration_p99_seconds,
    max(duration_seconds) AS duration_max_seconds
FROM conversations
SEMI JOIN rollup_partitions AS p ON p.app = conversations.app AND p.day = conversations.partition_date
WHERE partition_date BETWEEN $first AND $last
GROUP BY partition_date, app
