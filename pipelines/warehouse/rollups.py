"""Daily rollups: the trend tables (`sql/rollups/`, one SELECT each) the named queries, the
dashboard and BI tools read, kept per (app, day) partition by the loads themselves.

A trend over the raw tables would cost the whole history on every query; a rollup row costs one
partition's rows once, when its partition is loaded. The load that replaces partitions computes
their rollup rows again in its own transaction (`refresh`), so a reader sees both or neither,
and percentiles stay exact: each is computed over the one (app, day) it describes. A rollup
whose file changes (or a warehouse that has none yet) is computed again from every loaded
partition when the schema is set up (`ensure`)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from datetime import date
from functools import cache
from pathlib import Path

import duckdb

from pipelines.sqlfiles import SQL_DIR, sql_files, sql_text
from pipelines.warehouse import parts

logger = logging.getLogger(__name__)

CHUNK_PARTITIONS = 32
"""Partitions computed together: a first computation over a long history goes a few partitions
at a time, each chunk reading their parts alone, so its memory is that of a few partitions, and
its time grows with the history, not with its square."""

EVALUATED_CONVERSATIONS = SQL_DIR / "rollups" / "evaluated_conversation_turns.sql"
"""The rollup an evaluation load computes too: it reads the evaluation tables as well."""


@cache
def rollup_files() -> tuple[Path, ...]:
    return tuple(sql_files("rollups"))


def rollup_names() -> list[str]:
    return [path.stem for path in rollup_files()]


def _select(path: Path) -> str:
    return path.read_text().strip().rstrip(";")


def _definition(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def ensure(conn: duckdb.DuckDBPyConnection, root: Path | None = None) -> list[str]:
    """Create each rollup table that is missing or computed by an older definition, and compute
    it from every loaded partition (`refresh`, `root` its parts'), inside the caller's transaction
    (after the views it reads exist); the rollups so computed. (A concurrent DuckLake load doing
    the same conflicts at its commit, and is retried.)"""
    tables = {name for (name,) in conn.execute(sql_text("warehouse/list_tables.sql")).fetchall()}
    conn.execute(sql_text("warehouse/create_rollup_definitions.sql"))
    current = dict(conn.execute(sql_text("warehouse/rollup_definitions.sql")).fetchall())
    stale = [
        path
        for path in rollup_files()
        if path.stem not in tables or current.get(path.stem) != _definition(path)
    ]
    if not stale:
        return []
    conn.execute(sql_text("warehouse/create_rollup_partitions.sql"))  # what the files read
    for path in stale:
        replaced = "drop_table" if path.stem in tables else "drop_view"  # an older version's view
        conn.execute(sql_text(f"warehouse/{replaced}.sql").format(table=path.stem))
        text = sql_text("warehouse/create_rollup.sql").format(table=path.stem, rollup=_select(path))
        conn.execute(text, {"first": date.min, "last": date.min})
    conn.execute(sql_text("warehouse/clear_rollup_definitions.sql"))
    conn.executemany(
        sql_text("warehouse/record_rollup_definition.sql"),
        [{"rollup": path.stem, "definition": _definition(path)} for path in rollup_files()],
    )
    loaded = conn.execute(sql_text("warehouse/loaded_partitions.sql")).fetchall()
    if loaded:  # once after an upgrade, and minutes for millions of conversations: say so
        logger.warning(
            "computing %s again over the %d loaded partitions (a new definition), once",
            ", ".join(path.stem for path in stale),
            len(loaded),
        )
    refresh(conn, loaded, stale, root)
    return [path.stem for path in stale]


def refresh(
    conn: duckdb.DuckDBPyConnection,
    partitions: Iterable[parts.Partition],
    files: Sequence[Path] | None = None,
    root: Path | None = None,
) -> None:
    """Compute every rollup's (or `files`') rows of these partitions again from the raw tables,
    inside the caller's transaction: a partition left with no rows keeps none. `root`: the parts
    of a file warehouse, of which each chunk of partitions reads its own alone
    (`parts.reading_only`); None where the caller chose what the tables show."""
    ordered = sorted(set(partitions))  # an app's days together: a folded part read once
    chosen = [(path.stem, _select(path)) for path in files or rollup_files()]
    stages_llm_calls = any("llm_calls" in select for _, select in chosen)  # the temporary table
    ((database,),) = conn.execute(sql_text("warehouse/current_database.sql")).fetchall()
    staging = sql_text("warehouse/stage_llm_calls.sql").format(database=database.replace('"', '""'))
    for start in range(0, len(ordered), CHUNK_PARTITIONS):
        chunk = ordered[start : start + CHUNK_PARTITIONS]
        conn.execute(sql_text("warehouse/create_rollup_partitions.sql"))
        conn.executemany(
            sql_text("warehouse/insert_rollup_partition.sql"),
            [{"app": app, "day": day} for app, day in chunk],
        )
        days = [day for _, day in chunk]
        bounds = {"first": min(days), "last": max(days)}
        with parts.reading_only(conn, root, chunk):
            if stages_llm_calls:
                conn.execute(staging, bounds)
            for table, select in chosen:
                conn.execute(sql_text("warehouse/delete_rollup_rows.sql").format(table=table), bounds)
                text = sql_text("warehouse/insert_rollup_rows.sql").format(table=table, rollup=select)
                conn.execute(text, bounds)
    conn.execute(sql_text("warehouse/drop_staged_llm_calls.sql"))
    conn.execute(sql_text("warehouse/drop_rollup_partitions.sql"))
