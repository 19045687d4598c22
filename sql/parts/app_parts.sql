-- Every part listed for these apps' days, by table: what `parts.fold` groups into folded parts.
SELECT relation, app, partition_date, file FROM warehouse_parts
WHERE list_contains($apps, app) AND partition_date IS NOT NULL
ORDER BY relation, app, partition_date;
