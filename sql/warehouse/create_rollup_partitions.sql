-- The (app, day) partitions whose rollup rows are computed again, read by every sql/rollups/ file.
CREATE OR REPLACE TEMP TABLE rollup_partitions (app VARCHAR, day DATE);
