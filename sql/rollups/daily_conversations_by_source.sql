-- Daily conversation volume by app and source.
-- Grain: one row per (day, app, source); day is the UTC day of start_time (the day of its partition).
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    partition_date AS day,
    app,
    coalesce(source, 'SOURCE_UNSPECIFIED') AS source,
    count(*) AS conversations,
    sum(turn_count) AS turns,
    count(*) FILTER (WHERE end_time IS NULL) AS in_progress
FROM conversations
SEMI JOIN rollup_partitions AS p ON p.app = conversations.app AND p.day = conversations.partition_date
WHERE partition_date BETWEEN $first AND $last
GROUP BY ALL
