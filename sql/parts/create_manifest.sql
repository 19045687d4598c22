-- The bookkeeping of a DuckDB-file warehouse whose conversation tables are Parquet parts
-- (pipelines/warehouse/parts.py): the parts each table lists now, the parts loads replaced (kept
-- while a reader's older file may list them), and the number and time of every publication.
CREATE TABLE IF NOT EXISTS warehouse_parts (
    relation VARCHAR,
    app VARCHAR,
    partition_date DATE,
    file VARCHAR,
    rows BIGINT
);
CREATE TABLE IF NOT EXISTS warehouse_retired_parts (file VARCHAR, retired_version BIGINT);
CREATE TABLE IF NOT EXISTS warehouse_publications (version BIGINT, published_at TIMESTAMPTZ);
