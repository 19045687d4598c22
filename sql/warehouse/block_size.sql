-- The block size of the open database file, in bytes.
SELECT block_size FROM pragma_database_size() WHERE database_name = current_database();
