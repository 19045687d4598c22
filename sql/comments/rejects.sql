-- Descriptions of rejects and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE rejects IS 'One row per object that could not be loaded, with the reason and the object as received.';
COMMENT ON COLUMN rejects.app IS 'Full resource name of the app whose data held the object.';
COMMENT ON COLUMN rejects.partition_date IS 'Day (UTC) of the partition or fetch that held the object.';
COMMENT ON COLUMN rejects.source IS 'What the object was: conversation, evaluation_run, evaluation_result or evaluation_operation.';
COMMENT ON COLUMN rejects.resource_name IS 'Resource name of the object, when it had one.';
COMMENT ON COLUMN rejects.reason IS 'Why it was rejected.';
COMMENT ON COLUMN rejects.raw_json IS 'The object as received (JSON).';
