-- One app's newest day with conversations and its number of conversations (freshness), from the
-- daily rollup: no conversation part is read.
SELECT max(day) AS newest_day, coalesce(sum(conversations), 0) AS conversations
FROM daily_conversations WHERE app = $app;
