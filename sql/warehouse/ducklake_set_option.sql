-- Set the DuckLake option $name to $value for the whole lake (kept in its catalog).
CALL warehouse.set_option($name, $value);
