-- A DuckLake's snapshots older than $kept, but its newest. Compared here rather than by
-- `ducklake_expire_snapshots(older_than => …)`, which expires every snapshot of a SQLite catalog
-- whatever the time given (DuckLake of DuckDB 1.5.5).
SELECT snapshot_id
FROM ducklake_snapshots('warehouse')
WHERE snapshot_time < now() - CAST($kept AS INTERVAL)
    AND snapshot_id < (SELECT max(snapshot_id) FROM ducklake_snapshots('warehouse'))
ORDER BY snapshot_id;
