-- The partitions not replaced by the load ($files: their conversations parts, of the load's
-- apps) that hold a conversation of the load: it moved, and leaves them.
SELECT DISTINCT held.app, held.partition_date
FROM read_parquet($files, hive_partitioning = true, hive_types = {'partition_date': DATE}) AS held
SEMI JOIN load_targets USING (conversation_name);
