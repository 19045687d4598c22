-- The rows of folded parts of the days chosen for each file (the table {chosen}): a few
-- partitions of a folded part, which also holds other days, or other apps' same days.
SELECT {columns}
FROM read_parquet({files}, hive_partitioning = false, filename = true) AS folded
SEMI JOIN {chosen} AS chosen ON chosen.file = folded.filename AND chosen.partition_date = folded.partition_date
