-- Append Parquet partition files (a list of paths) to {table}, matching columns by name.
INSERT INTO {table} BY NAME SELECT * FROM read_parquet($paths, hive_partitioning = false);
