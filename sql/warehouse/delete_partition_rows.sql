-- Remove every row of {table} that belongs to a conversation being replaced.
DELETE FROM {table} WHERE conversation_name IN (SELECT conversation_name FROM partition_conversations);
