-- One folded part of {relation}: the rows of some days of one app ($app), read from its current
-- parts of those days, but those of the load's conversations that belong to another partition;
-- with their day, in the order read (day by day), in row groups of 8,192 rows (about a busy app's
-- day of spans), so that a query of one day skips the other days' row groups. The day a load's
-- conversation stays on (NULL in another app) is compared in the join itself: written as
-- `app <> $app OR partition_date <> incoming.partition_date`, the condition made DuckDB compare
-- every row with every conversation of the load (3.7 s instead of 0.06 s for a week of spans).
COPY (
    SELECT {columns}, incoming.partition_date
    FROM (
{sources}
    ) AS incoming
    ANTI JOIN (
        SELECT conversation_name, CASE WHEN app = $app THEN partition_date END AS kept_day
        FROM load_targets
    ) AS elsewhere
        ON elsewhere.conversation_name = incoming.conversation_name
        AND elsewhere.kept_day IS DISTINCT FROM incoming.partition_date
) TO {target} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 8192);
