-- How many views of parts name their files under another folder than $root: the file and its
-- parts were moved together, and the views must name the parts where they are now.
SELECT count(*)
FROM duckdb_views()
WHERE database_name = current_database() AND schema_name = 'parts'
    AND contains(sql, 'read_parquet') AND NOT contains(sql, $root || '/');
