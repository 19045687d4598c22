-- Columns of every table and view of the main schema, in order (for the schema check).
SELECT table_name, column_name, data_type
FROM information_schema.columns
WHERE table_catalog = current_database() AND table_schema = 'main'
ORDER BY table_name, ordinal_position;
