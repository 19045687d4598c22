-- Whether {table} holds a row (a count names no column: on a DuckLake, no per-column statistics
-- lookup).
SELECT count(*) > 0 FROM {table};
