-- Append one Parquet partition file to {table}, matching columns by name.
INSERT INTO {table} BY NAME SELECT * FROM read_parquet($path, hive_partitioning = false);
