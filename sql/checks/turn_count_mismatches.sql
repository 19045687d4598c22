-- Conversations of the partition (check_scope) whose reported turn_count differs from the
-- turns loaded (e.g. a summary the server would not expand). Reported as a warning. Only the
-- run's days ($first to $last) are read.
-- Returns one row: how many, and up to 10 of them.
SELECT count(*) AS failures, list(mismatch)[1:10] AS sample
FROM (
    SELECT struct_pack(c.conversation_name, c.turn_count, turns_loaded := count(t.turn_index)) AS mismatch
    FROM conversations AS c
    LEFT JOIN (SELECT * FROM turns WHERE partition_date BETWEEN $first AND $last) AS t USING (conversation_name)
    WHERE c.partition_date BETWEEN $first AND $last
      AND c.conversation_name IN (SELECT conversation_name FROM check_scope)
    GROUP BY c.conversation_name, c.turn_count
    HAVING c.turn_count <> count(t.turn_index)
);
