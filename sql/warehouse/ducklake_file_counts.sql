-- How many data files each table of a DuckLake reads now (one catalog query for them all).
SELECT table_name, file_count FROM ducklake_table_info('warehouse');
