-- The $limit slowest spans of each of the given conversations, slowest first; a turn's root span
-- is the turn itself, so only the spans below it count. Joined on the conversations' partitions,
-- so only their days' row groups are read.
SELECT s.conversation_name, s.turn_index, s.span_id, s.name, s.depth, s.duration_seconds
FROM spans AS s
SEMI JOIN (
    SELECT conversation_name, partition_date FROM conversations WHERE conversation_name IN (SELECT unnest($conversations))
) AS c USING (conversation_name, partition_date)
WHERE s.depth > 0
QUALIFY row_number() OVER (PARTITION BY s.conversation_name ORDER BY s.duration_seconds DESC NULLS LAST, s.span_id) <= $limit
ORDER BY s.conversation_name, s.duration_seconds DESC NULLS LAST, s.turn_index, s.span_id;
