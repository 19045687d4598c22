-- Each Parquet file's rows (a list of paths), read from its footer alone, by the partition it
-- holds (load_partitions).
SELECT owner.app, owner.partition_date, files.num_rows
FROM parquet_file_metadata($paths) AS files
JOIN load_partitions AS owner ON owner.folders = regexp_extract(files.file_name, '([^/]+/[^/]+)/[^/]+$', 1);
