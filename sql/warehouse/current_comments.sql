-- The current description of every table, view and column: (relation, column or NULL, comment).
SELECT table_name, NULL, comment
FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main'
UNION ALL
SELECT view_name, NULL, comment
FROM duckdb_views()
WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
UNION ALL
SELECT table_name, column_name, comment
FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main';
