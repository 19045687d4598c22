-- Folded parts some of whose days later loads replaced with day parts: their rows of the other
-- days alone (warehouse_hidden_days names the days replaced, by the part's name under the root).
SELECT {columns}
FROM read_parquet({files}, hive_partitioning = false, filename = true) AS folded
ANTI JOIN main.warehouse_hidden_days AS hidden
    ON {root} || hidden.file = folded.filename AND hidden.partition_date = folded.partition_date
