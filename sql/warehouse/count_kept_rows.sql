-- The rows a DuckLake load inserts per partition: those of kept_partition_rows.sql.
SELECT load_app, partition_date, count(*) FROM ({sources}) GROUP BY ALL;
