-- Change one DuckDB setting of the open connection; {key} is a setting name checked by the caller.
SET {key} = $value;
