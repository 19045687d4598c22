-- A view a table takes the place of (a trend view of an older version, now a rollup).
DROP VIEW IF EXISTS {table};
