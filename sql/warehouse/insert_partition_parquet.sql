-- Append one partition's Parquet file to {table}, matching columns by name, each row
-- stamped with the partition's day.
INSERT INTO {table} BY NAME
SELECT *, CAST($day AS DATE) AS partition_date FROM read_parquet($path, hive_partitioning = false);
