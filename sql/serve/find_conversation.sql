-- The conversation named $name: by its full resource name, else by its id (two rows: the id is
-- ambiguous across apps).
SELECT * EXCLUDE (partition_date), partition_date
FROM conversations
WHERE conversation_name = $name OR (conversation_id = $name AND NOT contains($name, '/'))
ORDER BY conversation_name
LIMIT 2;
