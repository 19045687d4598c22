-- The name of the database this connection writes (a file's name, or a DuckLake's).
SELECT current_database();
