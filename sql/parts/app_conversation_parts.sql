-- The conversations parts of these apps ($apps), with their partitions.
SELECT app, partition_date, file FROM warehouse_parts
WHERE relation = 'conversations' AND list_contains($apps, app);
