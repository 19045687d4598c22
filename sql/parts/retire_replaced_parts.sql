-- The parts listed for the partitions written (a folded part is listed for each of its days), set
-- aside until the written ones are listed in their place (`retire_unlisted_parts.sql`).
CREATE OR REPLACE TEMP TABLE replaced_parts AS
SELECT DISTINCT file FROM warehouse_parts
SEMI JOIN written_parts USING (relation, app, partition_date);
-- The days of folded parts that a written day part replaces: the folded part stays listed for its
-- other days (`folding.fold` does not write it again for a few), and its views leave these out.
INSERT INTO warehouse_hidden_days
SELECT file, partition_date FROM warehouse_parts
SEMI JOIN written_parts USING (relation, app, partition_date)
WHERE contains(file, '/folded/');
