-- Descriptions of loaded_partitions and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE loaded_partitions IS 'One row per (app, day) partition a load fetched, with conversations or none: a day without conversations listed here was quiet, one not listed was never loaded.';
COMMENT ON COLUMN loaded_partitions.app IS 'Full resource name of the app.';
COMMENT ON COLUMN loaded_partitions.partition_date IS 'The day (UTC) whose conversations the load fetched.';
