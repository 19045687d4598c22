"""The warehouse's views (`sql/views/`, in dependency order), rollup tables (`sql/rollups/`),
macros over them (`sql/macros/`) and descriptions (`sql/comments/`, if changed)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import duckdb

from pipelines.sqlfiles import sql_files, sql_text
from pipelines.warehouse import rollups
from pipelines.warehouse.part_views import window_days
from pipelines.warehouse.transaction import transaction

_LINE_COMMENT = re.compile(r"--[^\n]*")
_COMMENT_STATEMENT = re.compile(
    r"COMMENT\s+ON\s+(?P<kind>TABLE|VIEW|COLUMN)\s+(?P<target>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)"
    r"\s+IS\s+'(?P<text>(?:[^']|'')*)'\s*;",
    re.IGNORECASE,
)


def _without_comments(text: str) -> str:
    return _LINE_COMMENT.sub("", text)


@cache
def view_files() -> tuple[Path, ...]:
    """The view files, each after every view it reads (ties broken by name)."""
    files = {path.stem: path for path in sql_files("views")}
    reads = {
        name: {
            other
            for other in files
            if other != name and re.search(rf"\b{other}\b", _without_comments(path.read_text()))
        }
        for name, path in files.items()
    }
    ordered: list[str] = []
    while len(ordered) < len(files):
        ready = sorted(name for name in files if name not in ordered and reads[name] <= set(ordered))
        if not ready:
            cycle = sorted(set(files) - set(ordered))
            raise ValueError(f"views read each other in a cycle: {', '.join(cycle)}")
        ordered.extend(ready)
    return tuple(files[name] for name in ordered)


def view_names() -> list[str]:
    return [path.stem for path in view_files()]


@cache
def views_over_rollups() -> frozenset[str]:
    """The views that read a rollup table, themselves or through another view: they are made
    after the rollups, which are computed from the other views."""
    found: set[str] = set()
    for path in view_files():
        text = _without_comments(path.read_text())
        if any(re.search(rf"\b{name}\b", text) for name in {*rollups.rollup_names(), *found}):
            found.add(path.stem)
    return frozenset(found)


@dataclass(frozen=True)
class Description:
    relation: str
    column: str | None
    text: str
    statement: str


@cache
def descriptions() -> tuple[Description, ...]:
    found = []
    for path in sql_files("comments"):
        for match in _COMMENT_STATEMENT.finditer(_without_comments(path.read_text())):
            relation, _, column = match["target"].partition(".")
            found.append(
                Description(
                    relation=relation,
                    column=column or None,
                    text=match["text"].replace("''", "'"),
                    statement=match.group(0),
                )
            )
    return tuple(found)


CATALOG_SOURCES = ("tables", "migrations", "analysis", "views", "macros", "rollups", "comments")
"""The SQL folders the catalog is made from, or reads: a change to any makes it again."""


@cache
def definition(view_columns: bool) -> str:
    """A hash of every file of CATALOG_SOURCES (names and contents) and of `view_columns`."""
    digest = hashlib.sha256(repr(view_columns).encode())
    for folder in CATALOG_SOURCES:
        for path in sql_files(folder):
            digest.update(f"{folder}/{path.name}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _installed(conn: duckdb.DuckDBPyConnection) -> str | None:
    """The definition the catalog was made with; None when none was recorded or a view is missing
    (dropped by hand: the next load makes it again, as the query's error message promises)."""
    listed = {name for (name,) in conn.execute(sql_text("warehouse/list_relations.sql")).fetchall()}
    if "catalog_definition" not in listed or not set(view_names()) <= listed:
        return None
    found = conn.execute(sql_text("warehouse/catalog_definition.sql")).fetchone()
    return None if found is None else found[0]


def install(
    conn: duckdb.DuckDBPyConnection, *, view_columns: bool = True, parts_root: Path | None = None
) -> None:
    """(Re)create the views, the rollups not current (`rollups.ensure`), the macros (DuckDB binds
    a macro's tables when it is made: after the rollups) and the descriptions in one transaction
    (call it outside one). The views, macros and descriptions are made only when their files
    changed since the warehouse's last install (`definition`).
    `view_columns=False` where views' columns take no comment (DuckLake: views and tables do);
    `parts_root`: the conversation tables' parts, which a rollup computed again reads a few
    partitions at a time (`rollups.refresh`)."""
    later = views_over_rollups()
    wanted = definition(view_columns)
    if _installed(conn) == wanted:
        with transaction(conn):
            if rollups.ensure(conn, parts_root):
                apply_comments(conn, view_columns=view_columns)  # a rollup's view made again has none
        return
    with transaction(conn):
        for path in view_files():
            if path.stem not in later:
                conn.execute(path.read_text())
        rollups.ensure(conn, parts_root)
        days = window_days(parts_root)
        for path in sql_files("macros"):
            conn.execute(sql_text(f"macros/{path.name}").format(relation=days))
        for path in view_files():
            if path.stem in later:
                conn.execute(path.read_text())
        apply_comments(conn, view_columns=view_columns)
        conn.execute(sql_text("warehouse/record_catalog_definition.sql"), {"definition": wanted})


def apply_comments(conn: duckdb.DuckDBPyConnection, *, view_columns: bool = True) -> int:
    current: dict[tuple[str, str | None], str | None] = {}
    for relation, column, comment in conn.execute(sql_text("warehouse/current_comments.sql")).fetchall():
        current[(relation, column)] = comment
    views = set(view_names())
    applied = 0
    for description in descriptions():
        if not view_columns and description.column and description.relation in views:
            continue
        key = (description.relation, description.column)
        if key in current and current[key] != description.text:
            conn.execute(description.statement)
            applied += 1
    return applied
