-- The file this connection's database lives in (a load's working copy, the next published file).
SELECT path FROM duckdb_databases() WHERE database_name = current_database();
