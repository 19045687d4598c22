-- Each Parquet file's rows (a list of paths), read from its footer alone.
SELECT file_name, num_rows FROM parquet_file_metadata($paths);
