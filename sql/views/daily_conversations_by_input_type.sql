-- How many conversations used each input type (text, audio, image, ...) each day?
-- Grain: one row per (day, app, input_type); day is the UTC date of the conversation's start_time.
-- A conversation with several input types counts once under each of them, so the rows of a day
-- do not add up to its conversations; one without any is counted as INPUT_TYPE_UNSPECIFIED.
CREATE OR REPLACE VIEW daily_conversations_by_input_type AS
SELECT
    CAST(timezone('UTC', c.start_time) AS DATE) AS day,
    c.app,
    coalesce(i.input_type, 'INPUT_TYPE_UNSPECIFIED') AS input_type,
    count(DISTINCT c.conversation_name) AS conversations
FROM conversations AS c
LEFT JOIN (
    SELECT DISTINCT conversation_name, unnest(input_types) AS input_type FROM conversations
) AS i USING (conversation_name)
WHERE c.start_time IS NOT NULL
GROUP BY ALL;
