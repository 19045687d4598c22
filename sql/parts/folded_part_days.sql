-- The rows of each day a folded part holds.
SELECT partition_date, count(*) FROM read_parquet($file, hive_partitioning = false) GROUP BY ALL;
