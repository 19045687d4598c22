-- A DuckLake's snapshots, and the data and delete files its tables read now.
SELECT
    (SELECT count(*) FROM ducklake_snapshots('warehouse')) AS snapshots,
    coalesce(sum(file_count), 0) AS data_files,
    coalesce(sum(delete_file_count), 0) AS delete_files
FROM ducklake_table_info('warehouse');
