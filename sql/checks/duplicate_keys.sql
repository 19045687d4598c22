-- Keys of {table} that occur more than once among the partition's conversations
-- (check_scope, in the run's days $first to $last, whose parts alone are read); the key is
-- ({key}). Expect none.
-- Returns one row: how many keys repeat, and up to 10 of them.
SELECT count(*) AS failures, list(duplicate)[1:10] AS sample
FROM (
    SELECT struct_pack({key}) AS duplicate
    FROM {table}
    WHERE partition_date BETWEEN $first AND $last
      AND conversation_name IN (SELECT conversation_name FROM check_scope)
    GROUP BY ALL
    HAVING count(*) > 1
);
