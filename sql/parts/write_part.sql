-- One new part of {relation}: the rows of $source (the partition's flattened file in the lake,
-- or the part it had) but those of the load's conversations that belong to another partition.
COPY (
    SELECT {columns}
    FROM read_parquet($source, hive_partitioning = false) AS incoming
    ANTI JOIN load_targets AS elsewhere
        ON elsewhere.conversation_name = incoming.conversation_name
        AND (elsewhere.app <> $app OR elsewhere.partition_date <> $day)
) TO {target} (FORMAT parquet, COMPRESSION zstd);
