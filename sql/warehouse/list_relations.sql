-- Tables and views of the main schema.
SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = 'main';
