-- How many conversations started each day, split by app, source, channel type and language?
-- Grain: one row per (day, app, source, channel_type, language_code); day is the UTC date of the
-- conversation's start_time (the day of its partition). Missing values are named: SOURCE_UNSPECIFIED,
-- CHANNEL_TYPE_UNSPECIFIED, and "und" (BCP-47 "undetermined") for the language.
-- turns sums turn_count as the API reports it; in_progress counts conversations without end_time.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    partition_date AS day,
    app,
    coalesce(source, 'SOURCE_UNSPECIFIED') AS source,
    coalesce(channel_type, 'CHANNEL_TYPE_UNSPECIFIED') AS channel_type,
    coalesce(language_code, 'und') AS language_code,
    count(*) AS conversations,
    CAST(sum(turn_count) AS BIGINT) AS turns,
    count(*) FILTER (WHERE end_time IS NULL) AS in_progress
FROM conversations
SEMI JOIN rollup_partitions AS p ON p.app = conversations.app AND p.day = conversations.partition_date
WHERE partition_date BETWEEN $first AND $last
GROUP BY ALL
