-- Every (app, day) partition a load (ingest or rebuild) fetched, with conversations or none: a day
-- without conversations here was quiet, one missing was never loaded. Key: (app, partition_date).
CREATE TABLE IF NOT EXISTS loaded_partitions (
    app VARCHAR,
    partition_date DATE
);
