-- Which definition (a hash of its sql/rollups/ file) each rollup table was computed with: a
-- rollup whose file changed is computed again from every loaded partition.
CREATE TABLE IF NOT EXISTS rollup_definitions (rollup VARCHAR, definition VARCHAR);
