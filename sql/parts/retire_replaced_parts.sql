-- The parts the load's parts replace, those of their (relation, app, day), retired by
-- publication $version: deleted once no reader's file lists them (collectable_parts.sql).
INSERT INTO warehouse_retired_parts
SELECT file, $version FROM warehouse_parts
SEMI JOIN written_parts USING (relation, app, partition_date);
