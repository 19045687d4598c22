-- A DuckLake table's small adjacent data files merged into few: each file is a look at the
-- catalog, and a read of its footer, for every statement that reads the table.
CALL ducklake_merge_adjacent_files('warehouse', $table);
