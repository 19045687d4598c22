-- Remove the rejects of source $source recorded before for every partition of the load
-- (load_partitions): one statement a load, as each costs a DuckLake a look at its catalog.
DELETE FROM rejects
WHERE source = $source
    AND EXISTS (
        SELECT 1 FROM load_partitions AS p
        WHERE p.app = rejects.app AND p.partition_date = rejects.partition_date
    );
