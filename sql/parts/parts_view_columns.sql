-- The views of the parts schema with their columns (name, type) in order: the relations kept as
-- parts besides the conversation tables (the rollups), whose columns their view gives.
SELECT table_name, list((column_name, data_type) ORDER BY column_index)
FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'parts'
GROUP BY table_name;
