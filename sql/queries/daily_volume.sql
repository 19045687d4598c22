-- Conversations per UTC day, in total and by source, with turns and in-progress counts.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    CAST(sum(conversations) AS BIGINT) AS conversations,
    CAST(sum(conversations) FILTER (WHERE source = 'LIVE') AS BIGINT) AS live,
    CAST(sum(conversations) FILTER (WHERE source = 'SIMULATOR') AS BIGINT) AS simulator,
    CAST(sum(conversations) FILTER (WHERE source = 'EVAL') AS BIGINT) AS eval,
    CAST(sum(conversations) FILTER (WHERE source = 'AGENT_TOOL') AS BIGINT) AS agent_tool,
    CAST(sum(turns) AS BIGINT) AS turns,
    CAST(sum(in_progress) AS BIGINT) AS in_progress
FROM daily_conversations_by_source
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
GROUP BY day
ORDER BY day;
