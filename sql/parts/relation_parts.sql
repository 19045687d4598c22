-- The parts {relation} lists now, each once (a folded part is listed for each of its days), in a
-- stable order (first day, app): what its view reads.
SELECT file FROM warehouse_parts
WHERE relation = $relation
GROUP BY file
ORDER BY min(partition_date) NULLS FIRST, min(app) NULLS FIRST, file;
