-- The $limit slowest spans of each of the given conversations, slowest first; a turn's root span
-- is the turn itself, so only the spans below it count.
SELECT conversation_name, turn_index, span_id, name, depth, duration_seconds
FROM spans
WHERE depth > 0 AND conversation_name IN (SELECT unnest($conversations))
QUALIFY row_number() OVER (PARTITION BY conversation_name ORDER BY duration_seconds DESC NULLS LAST, span_id) <= $limit
ORDER BY conversation_name, duration_seconds DESC NULLS LAST, turn_index, span_id;
