-- Done with the partitions of a refresh.
DROP TABLE IF EXISTS rollup_partitions;
