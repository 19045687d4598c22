-- A DuckLake's rows inlined in its catalog written to Parquet, and its files with many deleted
-- rows written again. Small files are merged table by table: ducklake_merge_files.sql.
CALL ducklake_flush_inlined_data('warehouse');
CALL ducklake_rewrite_data_files('warehouse');
