-- Every part listed for these apps' days, by relation ($relations): the conversation tables' parts
-- `parts.fold` groups into folded parts, or the rollups' parts a question about these apps reads.
SELECT relation, app, partition_date, file FROM warehouse_parts
WHERE list_contains($apps, app) AND partition_date IS NOT NULL AND list_contains($relations, relation)
ORDER BY relation, app, partition_date;
