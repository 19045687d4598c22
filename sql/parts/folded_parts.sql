-- Folded parts: files that hold their rows' day (partition_date), ordered by it, in row groups
-- whose statistics let a query of a few days skip the others.
SELECT {columns}
FROM read_parquet({files}, hive_partitioning = false)
