-- Every table and view of the main schema with its description: (name, kind, comment).
SELECT table_name AS name, 'table' AS kind, comment
FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main'
UNION ALL
SELECT view_name, 'view', comment
FROM duckdb_views()
WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
ORDER BY kind, name;
