-- A conversation table of a DuckDB-file warehouse, as readers see it: its current parts, listed
-- by the view parts.{relation} that each load replaces (this one stays, with its descriptions).
CREATE OR REPLACE VIEW {relation} AS
SELECT {columns}
FROM parts.{relation};
