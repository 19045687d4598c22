-- Spans of the partition's conversations (check_scope) whose parent_span_id names no span
-- of the same turn (a conversation's rows share its day: only the run's days, $first to $last,
-- are read). Expect none.
-- Returns one row: how many, and up to 10 of them.
SELECT count(*) AS failures, list(orphan)[1:10] AS sample
FROM (
    SELECT struct_pack(s.conversation_name, s.turn_index, s.span_id, s.parent_span_id) AS orphan
    FROM spans AS s
    WHERE s.partition_date BETWEEN $first AND $last
      AND s.conversation_name IN (SELECT conversation_name FROM check_scope)
      AND s.parent_span_id IS NOT NULL
      AND NOT EXISTS (
          SELECT 1 FROM spans AS p
          WHERE p.partition_date BETWEEN $first AND $last
            AND p.conversation_name = s.conversation_name
            AND p.turn_index = s.turn_index
            AND p.span_id = s.parent_span_id
      )
);
