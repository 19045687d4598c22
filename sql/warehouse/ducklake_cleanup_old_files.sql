-- Delete the files scheduled for deletion (by expired snapshots, merges, rewrites) more than
-- $kept ago: a reader's transaction that still reads them is older than that.
CALL ducklake_cleanup_old_files('warehouse', older_than => now() - CAST($kept AS INTERVAL));
