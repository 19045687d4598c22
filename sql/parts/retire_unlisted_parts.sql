-- The replaced parts no partition lists any more, retired by publication $version: a folded part
-- still listed for some of its days stays.
INSERT INTO warehouse_retired_parts
SELECT file, $version FROM replaced_parts
ANTI JOIN warehouse_parts USING (file);
