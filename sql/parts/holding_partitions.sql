-- The partitions not replaced by the load (their conversations parts, of the load's apps) that
-- hold a conversation of the load: it moved, and leaves them.
SELECT DISTINCT held.app, held.partition_date
FROM (
{sources}
) AS held
SEMI JOIN load_targets USING (conversation_name);
