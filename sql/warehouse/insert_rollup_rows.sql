-- Compute {table}'s rows of the partitions in rollup_partitions ($first..$last) from its sql/rollups/ file.
INSERT INTO {table} BY NAME SELECT * FROM ({rollup});
