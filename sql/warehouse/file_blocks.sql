-- The open database file's block size in bytes, and its blocks in use.
SELECT block_size, used_blocks
FROM pragma_database_size()
WHERE database_name = current_database();
