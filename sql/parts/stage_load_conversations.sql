-- The conversations of one incoming partition ($incoming: its conversations Parquet file).
INSERT INTO load_conversations
SELECT conversation_name, $app, $day, $position
FROM read_parquet($incoming, hive_partitioning = false);
