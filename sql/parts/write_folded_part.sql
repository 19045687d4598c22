-- One folded part of {relation}: the rows of some days of one app ($app), read from its current
-- parts of those days, but those of the load's conversations that belong to another partition;
-- with their day, in the order read (day by day), in row groups of 8,192 rows (about a busy app's
-- day of spans), so that a query of one day skips the other days' row groups.
COPY (
    SELECT {columns}, incoming.partition_date
    FROM (
{sources}
    ) AS incoming
    ANTI JOIN load_targets AS elsewhere
        ON elsewhere.conversation_name = incoming.conversation_name
        AND (elsewhere.app <> $app OR elsewhere.partition_date <> incoming.partition_date)
) TO {target} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 8192);
