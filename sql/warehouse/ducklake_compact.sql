-- A DuckLake's rows inlined in its catalog written to Parquet, its small adjacent files merged, and
-- its files with many deleted rows written again: what its readers open stays a few files a table.
CALL ducklake_flush_inlined_data('warehouse');
CALL ducklake_merge_adjacent_files('warehouse');
CALL ducklake_rewrite_data_files('warehouse');
