-- Every column of the main schema's tables and views, in order: (relation, column, type, comment).
SELECT table_name, column_name, data_type, comment
FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main'
ORDER BY table_name, column_index;
