"""The check that a DuckDB table matches its Arrow schema: same columns, same order, same types."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import TableSpec

_SCALARS = {
    pa.string(): "VARCHAR",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
    pa.date32(): "DATE",
    pa.timestamp("us", tz="UTC"): "TIMESTAMP WITH TIME ZONE",
}


def duckdb_type(spec: TableSpec, field: pa.Field) -> str:
    if field.name in spec.json_columns:
        return "JSON"
    if pa.types.is_list(field.type):
        return f"{_SCALARS[field.type.value_type]}[]"
    return _SCALARS[field.type]


def spec_columns(spec: TableSpec) -> list[tuple[str, str]]:
    """(column, DuckDB type) of the table `spec`, in order."""
    return [(field.name, duckdb_type(spec, field)) for field in spec.warehouse_schema]


def table_columns(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    """(column, type) of every table and view, in order: one catalog query for every check."""
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in conn.execute(sql_text("warehouse/all_table_columns.sql")).fetchall():
        found.setdefault(table, []).append((column, kind))
    return found


def schema_mismatches(spec: TableSpec, columns: dict[str, list[tuple[str, str]]]) -> list[str]:
    """Differences between the table in the database (`columns`: `table_columns`, read once for
    every table) and `spec`; empty when they agree."""
    actual = columns.get(spec.name, [])
    expected = spec_columns(spec)
    if actual == expected:
        return []
    return [f"{spec.name}: expected columns {expected}, found {actual}"]
