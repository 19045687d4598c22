-- Conversations per UTC day split by source, channel type, language, input type or app.
-- A conversation with several input types counts under each of them.
-- param by CHOICE(source|channel_type|language|input_type|app) = source: what to split by
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
WITH split AS (
    SELECT
        day,
        app,
        CASE $by
            WHEN 'source' THEN source
            WHEN 'channel_type' THEN channel_type
            WHEN 'language' THEN language_code
            ELSE app
        END AS value,
        conversations
    FROM daily_conversations
    WHERE $by <> 'input_type'
    UNION ALL
    SELECT day, app, input_type AS value, conversations
    FROM daily_conversations_by_input_type
    WHERE $by = 'input_type'
)
SELECT day, value, CAST(sum(conversations) AS BIGINT) AS conversations
FROM split
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
GROUP BY day, value
ORDER BY day, value;
