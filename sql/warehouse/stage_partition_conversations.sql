-- The conversations a partition load replaces: those already loaded for the partition's app
-- and day, plus those arriving now (incoming is the partition's conversations Parquet).
INSERT INTO partition_conversations
SELECT conversation_name FROM conversations
WHERE app = $app AND partition_date = $day
UNION
SELECT conversation_name FROM read_parquet($incoming, hive_partitioning = false);
