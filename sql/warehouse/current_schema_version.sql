-- The highest schema version applied to this warehouse (NULL when none was recorded).
SELECT max(version) FROM schema_version;
