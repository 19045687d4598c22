"""Named queries: `sql/queries/NAME.sql`, run read-only with bound parameters."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipelines.sqlfiles import SQL_DIR, first_comment_line, sql_files
from pipelines.warehouse.duck import Warehouse

_NAME = re.compile(r"[a-z0-9_]+")
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class NamedQueryError(ValueError):
    """Unknown query, missing parameter, or no warehouse yet."""


def list_queries() -> list[tuple[str, str]]:
    """(name, one-line description) of every named query."""
    return [(path.stem, first_comment_line(path)) for path in sql_files("queries")]


def run_query(warehouse_path: str, name: str, params: Mapping[str, Any]) -> tuple[list[str], list[tuple]]:
    """Columns and rows of a named query; parameters are bound, never spliced into the text."""
    if not _NAME.fullmatch(name) or not (SQL_DIR / "queries" / f"{name}.sql").is_file():
        known = ", ".join(n for n, _ in list_queries())
        raise NamedQueryError(f"no query named {name!r}; known queries: {known}")
    if not Path(warehouse_path).exists():
        raise NamedQueryError(f"no warehouse at {warehouse_path}: run `ces-pipeline ingest` first")
    text = (SQL_DIR / "queries" / f"{name}.sql").read_text()
    wanted = set(_PARAMETER.findall(text))
    missing = wanted - set(params)
    if missing:
        raise NamedQueryError(f"query {name} needs --param for: {', '.join(sorted(missing))}")
    unknown = set(params) - wanted
    if unknown:
        raise NamedQueryError(f"query {name} takes no parameter {', '.join(sorted(unknown))}")
    with Warehouse(warehouse_path).connect(read_only=True) as conn:
        cursor = conn.execute(text, {key: params[key] for key in wanted})
        columns = [description[0] for description in cursor.description]
        return columns, cursor.fetchall()
