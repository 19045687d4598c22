-- Day parts: files without the day in them, which their path gives.
SELECT {columns}
FROM read_parquet({files}, hive_partitioning = true, hive_types = {{'partition_date': DATE}})
