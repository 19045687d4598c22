"""An older warehouse file is migrated on open; a newer one is refused."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipelines.sqlfiles import sql_files
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.migrations import WarehouseVersionError, latest_version, migrations

RUN = "projects/p/locations/l/apps/a/evaluationRuns/r"


def versions(path: str) -> list[tuple[int, str]]:
    with duckdb.connect(path, read_only=True) as conn:
        return conn.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()


def test_a_new_warehouse_starts_at_the_latest_version(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        warehouse.ensure_schema(conn)
    assert versions(warehouse.path) == [(latest_version(), "created")]
    assert latest_version() == migrations()[-1].version >= 2


def test_a_version_1_warehouse_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    path = str(tmp_path / "old.duckdb")
    with duckdb.connect(path) as conn:  # what the first release wrote: no observed_at, no version table
        for ddl in sql_files("tables"):
            conn.execute(ddl.read_text())
        conn.execute("ALTER TABLE evaluation_runs DROP COLUMN observed_at")
        conn.execute(
            "INSERT INTO evaluation_runs (evaluation_run_name, state) VALUES (?, ?)", [RUN, "COMPLETED"]
        )
    warehouse = Warehouse(path)
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        rows = conn.execute("SELECT evaluation_run_name, state, observed_at FROM evaluation_runs").fetchall()
    assert rows == [(RUN, "COMPLETED", None)]
    assert [version for version, _ in versions(path)] == [m.version for m in migrations()]


def test_a_warehouse_from_a_newer_release_is_refused(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        conn.execute("INSERT INTO schema_version VALUES (999, 'future', now())")
    with warehouse.connect() as conn, pytest.raises(WarehouseVersionError, match="schema version 999"):
        warehouse.ensure_schema(conn)
