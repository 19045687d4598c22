"""Daily rollups: the trend tables (`sql/rollups/`, one SELECT each) the named queries, the
dashboard and BI tools read, kept per (app, day) partition by the loads themselves.

A trend over the raw tables would cost the whole history on every query; a rollup row costs one
partition's rows once, when its partition is loaded. The load that replaces partitions computes
their rollup rows again in its own transaction (`refresh`), so a reader sees both or neither,
and percentiles stay exact: each is computed over the one (app, day) it describes. A rollup
whose file changes (or a warehouse that has none yet) is computed again from every loaded
partition when the schema is set up (`ensure`).

A DuckLake keeps each rollup as a table. A DuckDB file keeps it as Parquet parts, one per app
and month, beside the conversation tables' (`parts`): a load writes a new part for each
(app, month) it touched, its other days' rows carried over, so the file every load copies
holds no rollup row, and a load writes a month of an app's rollups, not the history's."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from functools import cache
from pathlib import Path

import duckdb

from pipelines.sqlfiles import SQL_DIR, quoted, sql_files, sql_text
from pipelines.warehouse import parts
from pipelines.warehouse.part_views import own_database
from pipelines.warehouse.publish import next_version

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


def _definition(path: Path, parted: bool) -> str:
    """A hash of the rollup's file, and of how it is stored (a DuckDB file's rollups are parts)."""
    return hashlib.sha256(path.read_bytes() + (b"\0parts" if parted else b"")).hexdigest()[:16]


def ensure(conn: duckdb.DuckDBPyConnection, root: Path | None = None) -> list[str]:
    """Create each rollup that is missing or computed by an older definition, and compute it from
    every loaded partition (`refresh`), inside the caller's transaction (after the views it reads
    exist); the rollups so computed. `root`: a DuckDB file's parts, where its rollups are kept
    too (None: a DuckLake's, kept as tables). (A concurrent DuckLake load doing the same conflicts
    at its commit, and is retried.)"""
    tables = {name for (name,) in conn.execute(sql_text("warehouse/list_tables.sql")).fetchall()}
    relations = {name for (name,) in conn.execute(sql_text("warehouse/list_relations.sql")).fetchall()}
    conn.execute(sql_text("warehouse/create_rollup_definitions.sql"))
    current = dict(conn.execute(sql_text("warehouse/rollup_definitions.sql")).fetchall())
    parted = root is not None
    stale = [
        path
        for path in rollup_files()
        if path.stem not in relations or current.get(path.stem) != _definition(path, parted)
    ]
    if not stale:
        return []
    conn.execute(sql_text("warehouse/create_rollup_partitions.sql"))  # what the files read
    for path in stale:
        # what an older version left under the name: a table, a view (of parts, or of an older
        # release's trend query)
        replaced = "drop_table" if path.stem in tables else "drop_view"
        conn.execute(sql_text(f"warehouse/{replaced}.sql").format(table=path.stem))
        if not parted:
            text = sql_text("warehouse/create_rollup.sql").format(table=path.stem, rollup=_select(path))
            conn.execute(text, {"first": date.min, "last": date.min})
    conn.execute(sql_text("warehouse/clear_rollup_definitions.sql"))
    conn.executemany(
        sql_text("warehouse/record_rollup_definition.sql"),
        [{"rollup": path.stem, "definition": _definition(path, parted)} for path in rollup_files()],
    )
    loaded = conn.execute(sql_text("warehouse/loaded_partitions.sql")).fetchall()
    if loaded:  # once after an upgrade, and minutes for millions of conversations: say so
        moved = parted and any(path.stem in tables for path in stale)  # kept in the file before
        logger.warning(
            "computing %s again over the %d loaded partitions (%s), once",
            ", ".join(path.stem for path in stale),
            len(loaded),
            "into Parquet parts beside the file" if moved else "a new definition",
        )
    refresh(conn, loaded, stale, root, whole=True)
    return [path.stem for path in stale]


def refresh(
    conn: duckdb.DuckDBPyConnection,
    partitions: Iterable[parts.Partition],
    files: Sequence[Path] | None = None,
    root: Path | None = None,
    *,
    whole: bool = False,
) -> None:
    """Compute every rollup's (or `files`') rows of these partitions again from the raw tables,
    inside the caller's transaction: a partition left with no rows keeps none. `root`: the parts
    of a DuckDB file, where each chunk of partitions reads its conversation rows alone
    (`parts.reading_only`) and each rollup is kept as a part per (app, month) (`_write_months`);
    None: a DuckLake, whose rollups are tables. `whole`: the partitions are every one loaded, and
    no part of the rollups is kept but those written now."""
    chosen = [(path.stem, _select(path)) for path in files or rollup_files()]
    if root is None:
        _refresh(conn, partitions, chosen, None)
        return
    with parts.part_writer(conn, root) as writer:
        if whole:
            for table, _ in chosen:
                listed = conn.execute(sql_text("parts/relation_months.sql"), {"relation": table}).fetchall()
                for app, month in listed:
                    writer.record(table, app, [(month, None, 0)])
        columns = _refresh(conn, partitions, chosen, writer)
        writer.publish(next_version(conn))
        parts.install_relations(conn, root, columns)


def _refresh(
    conn: duckdb.DuckDBPyConnection,
    partitions: Iterable[parts.Partition],
    chosen: Sequence[tuple[str, str]],
    writer: parts.PartWriter | None,
) -> dict[str, list[tuple[str, str]]]:
    """`refresh` of the rollups (name, SELECT) `chosen`: into their tables, or their parts written
    by `writer`, whose columns (name, type) it returns."""
    stages_llm_calls = any("llm_calls" in select for _, select in chosen)  # the temporary table
    staging = sql_text("warehouse/stage_llm_calls.sql").format(database=own_database(conn))
    root = None if writer is None else writer.root
    columns: dict[str, list[tuple[str, str]]] = {}
    for chunk in _chunks(partitions):
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
                if writer is None:
                    conn.execute(sql_text("warehouse/delete_rollup_rows.sql").format(table=table), bounds)
                    text = sql_text("warehouse/insert_rollup_rows.sql").format(table=table, rollup=select)
                    conn.execute(text, bounds)
                else:
                    columns[table] = _write_months(writer, table, select, chunk, bounds)
    if writer is not None and not columns:  # no partition: the columns alone
        conn.execute(sql_text("warehouse/create_rollup_partitions.sql"))
        with parts.reading_only(conn, root, []):
            for table, select in chosen:
                columns[table] = _fresh(conn, select, {"first": date.min, "last": date.min})
    conn.execute(sql_text("warehouse/drop_staged_llm_calls.sql"))
    conn.execute(sql_text("warehouse/drop_rollup_partitions.sql"))
    return columns


def _chunks(partitions: Iterable[parts.Partition]) -> list[list[parts.Partition]]:
    """The partitions in chunks of about `CHUNK_PARTITIONS`, an app's days together (a folded
    part read once), and never a month of an app in two: each (app, month) part is written once."""
    months: dict[tuple[str, date], list[parts.Partition]] = {}
    for app, day in sorted(set(partitions)):
        months.setdefault((app, day.replace(day=1)), []).append((app, day))
    chunks: list[list[parts.Partition]] = []
    for month in months.values():
        if not chunks or len(chunks[-1]) + len(month) > CHUNK_PARTITIONS:
            chunks.append([])
        chunks[-1].extend(month)
    return chunks


def _write_months(
    writer: parts.PartWriter,
    table: str,
    select: str,
    chunk: Sequence[parts.Partition],
    bounds: dict[str, date],
) -> list[tuple[str, str]]:
    """A new part of `table` for each (app, month) of the chunk: the rows of the chunk's
    partitions computed again, and the month's other days as its current part holds them. A load
    writes a month of one app's rollup rows, however long the history. The rollup's columns."""
    conn = writer.conn
    columns = _fresh(conn, select, bounds)
    for app, month in sorted({(app, day.replace(day=1)) for app, day in chunk}):
        current = conn.execute(
            sql_text("parts/partition_parts.sql"), {"app": app, "day": month, "relations": [table]}
        ).fetchall()
        relative, path = writer.new_part(parts.part_folder(table, app, month))
        sources = ""
        values = {"app": app, "first": month, "last": (month + timedelta(days=31)).replace(day=1)}
        if current:
            sources = sql_text("parts/kept_rollup_rows.sql")
            values["current"] = str(writer.root / current[0][1])
        text = sql_text("parts/write_rollup_part.sql").format(sources=sources, target=quoted(str(path)))
        ((rows,),) = conn.execute(text, values).fetchall()
        if not rows:
            path.unlink()
        writer.record(table, app, [(month, relative if rows else None, rows)])
    return columns


def _fresh(conn: duckdb.DuckDBPyConnection, select: str, bounds: dict[str, date]) -> list[tuple[str, str]]:
    """The rollup's rows of the partitions in `rollup_partitions`, in the table `fresh_rollup`;
    its columns (name, type)."""
    conn.execute(sql_text("warehouse/create_fresh_rollup.sql").format(rollup=select), bounds)
    found = conn.execute(sql_text("warehouse/fresh_rollup_columns.sql")).fetchall()
    return [(name, kind) for name, kind in found]
