-- The rows of {table} that belong to one conversation, in key order ({key}); its partition
-- first, so only that day's row groups are read.
SELECT * EXCLUDE (partition_date)
FROM {table}
WHERE partition_date = $day AND conversation_name = $name
ORDER BY {key};
