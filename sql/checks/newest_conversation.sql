-- The newest conversation start and the number of conversations, for the freshness check.
SELECT max(start_time) AS newest_start, count(*) AS conversations FROM conversations;
