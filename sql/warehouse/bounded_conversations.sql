-- A DuckLake's conversations of a few partitions' days ({first} to {last}) and apps ({first_app}
-- to {last_app}), shadowing the table for a block about those partitions (parts.reading_only):
-- constant ranges, by which the scan skips the data files of other days and apps.
CREATE OR REPLACE TEMP VIEW conversations AS
SELECT * FROM {database}.main.conversations
WHERE partition_date BETWEEN CAST({first} AS DATE) AND CAST({last} AS DATE)
    AND app BETWEEN {first_app} AND {last_app};
