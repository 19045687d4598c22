-- Conversations per UTC day, in total and by source, with turns and in-progress counts.
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
GROUP BY day
ORDER BY day;
