-- The columns (name, type) of the rollup rows computed last (create_fresh_rollup.sql). Asked of
-- the table alone: duckdb_columns() would bind every view, the temporary ones over a load's parts
-- included, which opens their files.
SELECT name, type
FROM pragma_table_info('temp.fresh_rollup')
ORDER BY cid;
