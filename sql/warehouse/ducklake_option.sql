-- The value of the DuckLake option $name set on the attached lake (no row: its default).
SELECT value FROM ducklake_options('warehouse') WHERE option_name = $name;
