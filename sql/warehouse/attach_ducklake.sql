-- The DuckLake catalog as the connection's `warehouse` database. DuckDB binds no parameters in
-- ATTACH, so each slot is a string literal made by `pipelines.warehouse.ducklake.quoted`.
ATTACH {target} AS warehouse (DATA_PATH {data_path}, READ_ONLY {read_only});
