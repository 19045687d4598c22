-- An empty rollup table with the columns the SELECT of its sql/rollups/ file computes.
CREATE TABLE {table} AS SELECT * FROM ({rollup}) LIMIT 0;
