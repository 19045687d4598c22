-- The partitions of a DuckLake load, each with the last two folders of its files' paths
-- (app=…/date=…), by which the load's statements tell each file's partition: a filesystem may
-- write a path's start differently (memory://x as memory:///x), never its end.
CREATE OR REPLACE TEMP TABLE load_partitions (folders VARCHAR, app VARCHAR, partition_date DATE);
