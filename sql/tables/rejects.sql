-- Objects that could not be loaded: which partition, what kind, which resource, why, and the
-- object as received. Key: (app, partition_date, source, resource_name, reason).
CREATE TABLE IF NOT EXISTS rejects (
    app VARCHAR,
    partition_date DATE,
    source VARCHAR,
    resource_name VARCHAR,
    reason VARCHAR,
    raw_json JSON
);
