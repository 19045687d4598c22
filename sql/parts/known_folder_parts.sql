-- The parts of one folder ($folder/, a table's partition) that a file lists, now or before: any
-- other part there was written by a load that never published (it was killed).
SELECT file FROM warehouse_parts WHERE starts_with(file, $folder)
UNION ALL
SELECT file FROM warehouse_retired_parts WHERE starts_with(file, $folder);
