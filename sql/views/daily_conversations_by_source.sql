-- Daily conversation volume by app and source.
-- Grain: one row per (day, app, source); day is the UTC date of start_time.
CREATE OR REPLACE VIEW daily_conversations_by_source AS
SELECT
    CAST(timezone('UTC', start_time) AS DATE) AS day,
    app,
    coalesce(source, 'SOURCE_UNSPECIFIED') AS source,
    count(*) AS conversations,
    sum(turn_count) AS turns,
    count(*) FILTER (WHERE end_time IS NULL) AS in_progress
FROM conversations
GROUP BY ALL;
