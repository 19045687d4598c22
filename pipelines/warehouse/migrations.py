"""Warehouse schema versions: `sql/tables/` is the current one, `sql/migrations/NNNN_name.sql` turns
NNNN-1 into NNNN, a transaction each (a file with tables but no version is version 1)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.sqlfiles import sql_files, sql_text
from pipelines.warehouse.transaction import transaction

_MIGRATION = re.compile(r"(\d{4})_(\w+)\.sql")
BASELINE_VERSION = 1
"""The first released schema, which kept no version table."""


class WarehouseVersionError(RuntimeError):
    """The warehouse file was written by a newer ces-pipeline than this one."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path


def migrations() -> list[Migration]:
    found = []
    for path in sql_files("migrations"):
        match = _MIGRATION.fullmatch(path.name)
        if match is None:
            raise ValueError(f"migration file {path.name} is not named NNNN_name.sql")
        found.append(Migration(int(match.group(1)), match.group(2), path))
    return sorted(found, key=lambda m: m.version)


def latest_version() -> int:
    return max([BASELINE_VERSION, *(m.version for m in migrations())])


def migrate(conn: duckdb.DuckDBPyConnection) -> None:
    """Bring the warehouse to the latest version. A new one is created whole, tables and version
    in one transaction, so a second writer setting it up at the same time (a DuckLake's) never
    takes a half-created warehouse for an old one: one of the two commits, the other conflicts
    and is retried."""
    latest = latest_version()
    with transaction(conn):
        tables = {name for (name,) in conn.execute(sql_text("warehouse/list_tables.sql")).fetchall()}
        conn.execute(sql_text("warehouse/create_schema_version.sql"))
        (version,) = conn.execute(sql_text("warehouse/current_schema_version.sql")).fetchone()
        if version is None and tables - {"schema_version"}:  # a file from before versions were kept
            version = BASELINE_VERSION
        if version is not None and version > latest:
            raise WarehouseVersionError(
                f"this warehouse is at schema version {version}, newer than this ces-pipeline knows "
                f"({latest}): upgrade ces-pipeline, or point CES_WAREHOUSE at another file"
            )
        # Tables the file lacks never had an older shape: they are created at the current one,
        # and a migration finds every table there (so it must leave a current table as it is).
        for path in sql_files("tables"):
            conn.execute(path.read_text())
        if version is None:
            conn.execute(
                sql_text("warehouse/record_schema_version.sql"), {"version": latest, "name": "created"}
            )
    for migration in migrations():
        if version is None or migration.version <= version:
            continue
        with transaction(conn):
            conn.execute(migration.path.read_text())
            conn.execute(
                sql_text("warehouse/record_schema_version.sql"),
                {"version": migration.version, "name": migration.name},
            )
