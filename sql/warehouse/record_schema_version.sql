-- Record that the warehouse is now at schema version $version.
INSERT INTO schema_version VALUES ($version, $name, now());
