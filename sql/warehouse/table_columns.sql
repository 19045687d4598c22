-- Columns of one table of the main schema, in order (for the schema check).
SELECT column_name, data_type
FROM information_schema.columns
WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = $table
ORDER BY ordinal_position;
