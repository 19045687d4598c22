-- The newest conversation start of one app and its number of conversations (freshness).
SELECT max(start_time) AS newest_start, count(*) AS conversations FROM conversations WHERE app = $app;
