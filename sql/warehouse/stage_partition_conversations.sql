-- The conversations a partition load replaces: those already loaded for the partition's app
-- and UTC day, plus those arriving now (incoming_conversations is the partition's Parquet).
INSERT INTO partition_conversations
SELECT conversation_name FROM conversations
WHERE app = $app AND start_time >= $since AND start_time < $until
UNION
SELECT conversation_name FROM read_parquet($incoming, hive_partitioning = false);
