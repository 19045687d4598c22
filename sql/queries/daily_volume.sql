-- Conversations per UTC day, in total and by source, with turns and in-progress counts.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day loaded
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    sum(conversations) AS conversations,
    sum(conversations) FILTER (WHERE source = 'LIVE') AS live,
    sum(conversations) FILTER (WHERE source = 'SIMULATOR') AS simulator,
    sum(conversations) FILTER (WHERE source = 'EVAL') AS eval,
    sum(conversations) FILTER (WHERE source = 'AGENT_TOOL') AS agent_tool,
    sum(turns) AS turns,
    sum(in_progress) AS in_progress
FROM daily_conversations_by_source
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
GROUP BY day
ORDER BY day;
