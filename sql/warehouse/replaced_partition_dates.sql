-- The conversations a partition load replaces that are in the warehouse already: how many, and
-- the first and last day they were loaded under. A count of 0 (a first load, or a rebuild into
-- an empty warehouse): there is nothing to delete.
SELECT count(*), min(partition_date), max(partition_date) FROM conversations
WHERE conversation_name IN (SELECT conversation_name FROM partition_conversations);
