-- The bookkeeping of a DuckDB-file warehouse whose conversation tables are Parquet parts
-- (pipelines/warehouse/parts.py): the parts each table lists now, the parts loads replaced (kept
-- while a reader's older file may list them), the number and time of every publication, and the
-- days of folded parts that day parts replaced since (their rows in the folded part are not read).
CREATE TABLE IF NOT EXISTS warehouse_parts (
    relation VARCHAR,
    app VARCHAR,
    partition_date DATE,
    file VARCHAR,
    rows BIGINT
);
CREATE TABLE IF NOT EXISTS warehouse_retired_parts (file VARCHAR, retired_version BIGINT);
CREATE TABLE IF NOT EXISTS warehouse_publications (version BIGINT, published_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS warehouse_hidden_days (file VARCHAR, partition_date DATE);
