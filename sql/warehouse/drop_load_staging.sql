-- What a DuckLake load staged about its partitions and conversations.
DROP TABLE partition_conversations;
DROP TABLE load_partitions;
