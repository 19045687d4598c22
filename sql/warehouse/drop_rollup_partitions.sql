-- Done with the partitions of a refresh, and the rows it computed.
DROP TABLE IF EXISTS rollup_partitions;
DROP TABLE IF EXISTS fresh_rollup;
