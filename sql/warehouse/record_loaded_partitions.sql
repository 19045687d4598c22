-- The partitions of the load (load_partitions) listed as loaded, each once however often loaded.
INSERT INTO loaded_partitions
SELECT DISTINCT app, partition_date
FROM load_partitions AS p
WHERE NOT EXISTS (
    SELECT 1 FROM loaded_partitions AS l WHERE l.app = p.app AND l.partition_date = p.partition_date
);
