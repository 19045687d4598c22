-- The current parts of a conversation table of a DuckDB-file warehouse, one Parquet file per
-- (app, day), the day read from each file's path (partition_date=YYYY-MM-DD), so that a query
-- filtering on partition_date opens only the files of those days.
CREATE OR REPLACE {temporary} VIEW {relation} AS
SELECT {columns}
FROM read_parquet({files}, hive_partitioning = true, hive_types = {{'partition_date': DATE}});
