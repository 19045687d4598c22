-- What a load staged about its partitions and conversations.
DROP TABLE load_partitions;
DROP TABLE load_conversations;
DROP TABLE load_targets;
