-- The (app, month) of every part $relation (a rollup) lists now.
SELECT DISTINCT app, partition_date FROM warehouse_parts WHERE relation = $relation;
