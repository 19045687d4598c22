-- The (app, day) partitions of {table}, a conversation table still stored in the file (an older
-- release's): each row's app is its conversation's (NULL for an orphan).
SELECT DISTINCT owner.app, rows.partition_date
FROM {table} AS rows
LEFT JOIN (SELECT conversation_name, any_value(app) AS app FROM conversations GROUP BY ALL) AS owner
    USING (conversation_name);
