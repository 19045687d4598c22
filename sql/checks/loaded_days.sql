-- One app's oldest and newest days with conversations and its number of conversations
-- (freshness, and which evaluation runs' conversations the warehouse can hold), from the daily
-- rollup: no conversation part is read.
SELECT min(day) AS oldest_day, max(day) AS newest_day, coalesce(sum(conversations), 0) AS conversations
FROM daily_conversations WHERE app = $app;
