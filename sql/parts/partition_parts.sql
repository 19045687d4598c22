-- The current part of each conversation table ($relations) for one partition.
SELECT relation, file FROM warehouse_parts
WHERE app IS NOT DISTINCT FROM $app AND partition_date IS NOT DISTINCT FROM $day
    AND list_contains($relations, relation);
