"""The SQL files under `sql/`, SQL's one home; `{table}` comes from the schema registry, values are bound."""

from __future__ import annotations

from functools import cache
from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent / "sql"
"""`sql/` of the project, which `pipelines/sql` links to (a wheel holds it there as package data)."""


@cache
def sql_text(relative: str) -> str:
    """The text of `sql/<relative>` (e.g. `warehouse/insert_parquet.sql`)."""
    path = SQL_DIR / relative
    if not path.is_file():
        raise FileNotFoundError(f"missing SQL file: {path}")
    return path.read_text()


def sql_files(folder: str) -> list[Path]:
    """The `.sql` files of `sql/<folder>`, sorted by name."""
    return sorted((SQL_DIR / folder).glob("*.sql"))


def quoted(text: str) -> str:
    """`text` as an SQL string literal, for the statements whose values DuckDB cannot bind
    (ATTACH, CREATE SECRET, a COPY's target, a view's file list)."""
    return "'" + text.replace("'", "''") + "'"
