-- Remove every row of {table} that belongs to a conversation being replaced. Those rows were
-- loaded under the days $first to $last: DuckDB skips the row groups of other days by their
-- min/max instead of looking up every row's name. Rows without a day are always looked at.
DELETE FROM {table}
WHERE (partition_date BETWEEN $first AND $last OR partition_date IS NULL)
    AND conversation_name IN (SELECT conversation_name FROM partition_conversations);
