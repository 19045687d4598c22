-- Version 6: a DuckDB-file warehouse keeps its conversation tables as Parquet parts beside the
-- file, read through views (pipelines/warehouse/parts.py moves an older file's rows there when
-- the schema is set up, after this version is recorded). A DuckLake keeps its tables. Recording
-- the version is the change: an older release then refuses this warehouse instead of writing
-- into views.
SELECT 1;
