-- The parts {relation} lists now, in a stable order (day, app): what its view reads.
SELECT file FROM warehouse_parts
WHERE relation = $relation
ORDER BY partition_date NULLS FIRST, app NULLS FIRST, file;
