"""The Arrow schema of each table is read from its DDL in sql/tables, column for column."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.sqlfiles import sql_files
from pipelines.transform.schemas import ALL_TABLES, TableSpec
from pipelines.warehouse.duck import Warehouse, WarehouseSchemaError
from pipelines.warehouse.types import schema_mismatches, table_columns


def test_there_is_one_ddl_file_per_table() -> None:
    assert sorted(path.stem for path in sql_files("tables")) == sorted(spec.name for spec in ALL_TABLES)


@pytest.mark.parametrize("spec", ALL_TABLES, ids=lambda spec: spec.name)
def test_ddl_matches_the_arrow_schema(spec: TableSpec) -> None:
    conn = duckdb.connect()
    conn.execute(next(p for p in sql_files("tables") if p.stem == spec.name).read_text())
    assert schema_mismatches(spec, table_columns(conn)) == []


def test_every_key_column_exists() -> None:
    for spec in ALL_TABLES:
        assert set(spec.key) <= set(spec.schema.names), spec.name
        assert spec.json_columns <= set(spec.schema.names), spec.name


def test_a_drifted_warehouse_is_refused_with_the_difference(tmp_path) -> None:
    path = str(tmp_path / "old.duckdb")
    with duckdb.connect(path) as conn:
        conn.execute("CREATE TABLE turns (conversation_name VARCHAR, turn_index INTEGER)")
    warehouse = Warehouse(path)
    with warehouse.connect() as conn, pytest.raises(WarehouseSchemaError, match="turns: expected columns"):
        warehouse.ensure_schema(conn)
