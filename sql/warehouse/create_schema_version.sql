-- The schema version of this warehouse file: one row per migration applied.
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER,
    name VARCHAR,
    applied_at TIMESTAMPTZ
);
COMMENT ON TABLE schema_version IS 'Schema versions applied to this warehouse file by ces-pipeline migrations (one row per version).';
