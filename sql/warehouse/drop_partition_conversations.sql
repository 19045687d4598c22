-- What a DuckLake load staged about the conversations it replaces.
DROP TABLE partition_conversations;
