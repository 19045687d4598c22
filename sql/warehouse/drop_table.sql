-- A table computed again from scratch (a rollup whose definition changed).
DROP TABLE IF EXISTS {table};
