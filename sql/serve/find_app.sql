-- The app named $name: its full resource name, else its id (two rows: the id is ambiguous).
SELECT DISTINCT app
FROM daily_conversations
WHERE app = $name OR (split_part(app, '/', 6) = $name AND NOT contains($name, '/'))
ORDER BY app
LIMIT 2;
