-- Delete the files under the data path that no snapshot lists (a load that failed after writing
-- them) and that are older than $kept: a load still running wrote its files since.
CALL ducklake_delete_orphaned_files('warehouse', older_than => now() - CAST($kept AS INTERVAL));
