"""The DuckDB warehouse: DDL from `sql/tables`, views from `sql/views`, partition loads."""
