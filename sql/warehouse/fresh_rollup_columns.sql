-- The columns (name, type) of the rollup rows computed last (create_fresh_rollup.sql).
SELECT column_name, data_type
FROM duckdb_columns()
WHERE database_name = 'temp' AND table_name = 'fresh_rollup'
ORDER BY column_index;
