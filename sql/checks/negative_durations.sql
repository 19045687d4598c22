-- Conversations, turns and spans of the partition (check_scope) with a negative duration.
-- Expect none. Only the run's days ($first to $last) are read.
-- Returns one row: how many, and up to 10 of them.
SELECT count(*) AS failures, list(offender)[1:10] AS sample
FROM (
    SELECT struct_pack(table_name := 'conversations', name := conversation_name, seconds := duration_seconds) AS offender
    FROM conversations WHERE partition_date BETWEEN $first AND $last AND duration_seconds < 0
    UNION ALL
    SELECT struct_pack(table_name := 'turns', name := conversation_name, seconds := duration_seconds)
    FROM turns WHERE partition_date BETWEEN $first AND $last AND duration_seconds < 0
    UNION ALL
    SELECT struct_pack(table_name := 'spans', name := conversation_name, seconds := duration_seconds)
    FROM spans WHERE partition_date BETWEEN $first AND $last AND duration_seconds < 0
)
WHERE offender.name IN (SELECT conversation_name FROM check_scope);
