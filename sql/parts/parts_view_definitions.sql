-- The views of the parts schema with the definition each was made from (its comment, a hash of
-- its statement): a view whose statement is unchanged is not made again.
SELECT view_name, comment
FROM duckdb_views()
WHERE database_name = current_database() AND schema_name = 'parts';
