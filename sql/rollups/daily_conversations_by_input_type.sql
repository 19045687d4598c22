-- How many conversations used each input type (text, audio, image, ...) each day?
-- Grain: one row per (day, app, input_type); day is the UTC day of the conversation's start_time (the day of its partition).
-- A conversation with several input types counts once under each of them, so the rows of a day
-- do not add up to its conversations; one without any is counted as INPUT_TYPE_UNSPECIFIED.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    partition_date AS day,
    app,
    coalesce(input_type, 'INPUT_TYPE_UNSPECIFIED') AS input_type,
    count(DISTINCT conversation_name) AS conversations
FROM (
    SELECT conversation_name, app, partition_date, unnest(CASE WHEN len(input_types) > 0 THEN input_types ELSE [NULL] END) AS input_type
    FROM conversations
    SEMI JOIN rollup_partitions AS p ON p.app = conversations.app AND p.day = conversations.partition_date
    WHERE partition_date BETWEEN $first AND $last
)
GROUP BY ALL
