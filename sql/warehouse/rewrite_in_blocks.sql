-- A database file written again, whole, in blocks of {block_size} bytes: every table with its
-- rows, every view, macro and comment (ATTACH takes no bound values: the paths are quoted).
ATTACH {source} AS source_file (READ_ONLY);
ATTACH {target} AS target_file (BLOCK_SIZE {block_size});
COPY FROM DATABASE source_file TO target_file;
DETACH target_file;
DETACH source_file;
