-- Number of rows of {table}.
SELECT count(*) FROM {table};
