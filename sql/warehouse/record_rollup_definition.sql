-- Record the definition $rollup is computed with now (after clear_rollup_definitions.sql).
INSERT INTO rollup_definitions VALUES ($rollup, $definition);
