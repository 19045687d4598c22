-- The window's slowest conversations and those with the most erroring tool calls, per app: the traces worth a look (ces-pipeline trace NAME).
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
-- param top INTEGER = 3: conversations per app and kind, at most 3 (what each day keeps)
SELECT
    app,
    kind,
    conversation_name,
    day,
    round(duration_seconds, 3) AS duration_seconds,
    turn_count,
    erroring_tool_calls
FROM daily_notable_conversations
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
QUALIFY row_number() OVER (
    PARTITION BY app, kind
    ORDER BY
        CASE WHEN kind = 'failing' THEN erroring_tool_calls END DESC NULLS LAST,
        duration_seconds DESC NULLS LAST,
        conversation_name
) <= least($top, 3)
ORDER BY
    app,
    kind DESC,
    CASE WHEN kind = 'failing' THEN erroring_tool_calls END DESC NULLS LAST,
    duration_seconds DESC NULLS LAST,
    conversation_name;
