-- Append the rows of a registered Arrow relation to {table}, matching columns by name.
INSERT INTO {table} BY NAME SELECT * FROM {relation};
