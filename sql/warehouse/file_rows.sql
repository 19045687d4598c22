-- Each Parquet file's rows (a list of paths), read from its footer alone, by the last two
-- folders of its path (app=…/date=…: a filesystem may write a path's start differently).
SELECT regexp_extract(file_name, '([^/]+/[^/]+)/[^/]+$', 1), num_rows FROM parquet_file_metadata($paths);
