-- Append a DuckLake load's partition files to {table}: the rows of kept_partition_rows.sql,
-- matching columns by name.
INSERT INTO {table} BY NAME SELECT * EXCLUDE (load_app) FROM ({relation});
