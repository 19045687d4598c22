-- A rollup's rows of the partitions in rollup_partitions ($first..$last), computed again from its
-- sql/rollups/ file before they are written to its parts (a DuckDB file's rollups).
CREATE OR REPLACE TEMP TABLE fresh_rollup AS SELECT * FROM ({rollup});
