-- The (app, day) partitions under which conversations a load replaces are loaded ($first to
-- $last): before the load's deletes, the days they leave (one whose start moved leaves its old
-- day); after its inserts, the days they arrive in. Their rollups are computed again.
SELECT DISTINCT app, partition_date FROM conversations
WHERE partition_date BETWEEN $first AND $last
    AND conversation_name IN (SELECT conversation_name FROM partition_conversations);
