-- Expire these snapshots: the files only they read are scheduled for deletion.
CALL ducklake_expire_snapshots('warehouse', versions => $versions);
