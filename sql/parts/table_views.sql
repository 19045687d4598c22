-- The main schema's views as they stand: (name, columns in order, the definition DuckDB keeps),
-- to tell whether a conversation table's view reads its parts' view with the current columns.
SELECT v.view_name, list(c.column_name ORDER BY c.column_index), any_value(v.sql)
FROM duckdb_views() AS v
JOIN duckdb_columns() AS c
    ON c.database_name = v.database_name AND c.schema_name = v.schema_name AND c.table_name = v.view_name
WHERE v.database_name = current_database() AND v.schema_name = 'main' AND NOT v.internal
GROUP BY v.view_name;
