-- Append partitions' Parquet files (a list of paths) to {table}, matching columns by name,
-- each row stamped with the day of the partition it came from (its file's date=YYYY-MM-DD).
INSERT INTO {table} BY NAME
SELECT * EXCLUDE (filename),
    CAST(regexp_extract(filename, 'date=([0-9-]+)/[^/]*$', 1) AS DATE) AS partition_date
FROM read_parquet($paths, hive_partitioning = false, filename = true);
