-- The parts listed for the partitions written (a folded part is listed for each of its days), set
-- aside until the written ones are listed in their place (`retire_unlisted_parts.sql`).
CREATE OR REPLACE TEMP TABLE replaced_parts AS
SELECT DISTINCT file FROM warehouse_parts
SEMI JOIN written_parts USING (relation, app, partition_date);
