-- A conversation table of a DuckDB-file warehouse that has no part yet: its columns, no row.
CREATE OR REPLACE {temporary} VIEW {relation} AS
SELECT {columns} WHERE false;
