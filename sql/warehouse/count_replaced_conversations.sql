-- How many of the conversations a partition load replaces are in the warehouse already.
-- None (a first load, or a rebuild into an empty warehouse): there is nothing to delete.
SELECT count(*) FROM conversations
WHERE conversation_name IN (SELECT conversation_name FROM partition_conversations);
