-- One part of {table}, a conversation table still stored in the file: the rows of one partition.
COPY (
    SELECT {columns}
    FROM {table} AS rows
    LEFT JOIN (SELECT conversation_name, any_value(app) AS partition_app FROM conversations GROUP BY ALL) AS owner
        USING (conversation_name)
    WHERE owner.partition_app IS NOT DISTINCT FROM $app AND rows.partition_date IS NOT DISTINCT FROM $day
) TO {target} (FORMAT parquet, COMPRESSION zstd);
