"""How a load writes the warehouse: the schema set up and checked, conversation partitions
replaced in one transaction (parts for a DuckDB file, tables for a DuckLake), evaluation runs
upserted. Apart from `duck` (connections) so that a read imports none of it: no pyarrow, no table
schemas, in `ces-pipeline query`'s start."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import (
    ALL_TABLES,
    CONVERSATION_TABLES,
    CONVERSATIONS,
    EVALUATION_RESULT_TABLES,
    EVALUATION_RUN_OPERATIONS,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_TABLES,
    OPERATION_REJECT_SOURCE,
    REJECTS,
    RESULT_REJECT_SOURCE,
    RUN_REJECT_SOURCE,
)
from pipelines.warehouse import analysis, ducklake, folding, garbage, metric_scores, parts, rollups
from pipelines.warehouse.catalog import apply_comments
from pipelines.warehouse.catalog import install as install_views_and_descriptions
from pipelines.warehouse.duck import Warehouse, WarehouseSchemaError, schema_version
from pipelines.warehouse.migrations import migrate
from pipelines.warehouse.publish import next_version
from pipelines.warehouse.transaction import transaction
from pipelines.warehouse.types import schema_mismatches, table_columns

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitionFiles:
    """One flattened (app, day) partition: its Parquet file per conversation table and its rejects."""

    app: str
    day: date
    tables: Mapping[str, str]
    rejects: str


def ensure_schema(warehouse: Warehouse, conn: duckdb.DuckDBPyConnection) -> None:
    """Create tables and views, describe them, refuse drift; once a process per published file
    and version (the working copy being written is the next published file)."""
    version = schema_version(conn)
    if _schema_key(warehouse, warehouse.path, version) in _SCHEMA_ENSURED:
        return
    migrate(conn)
    columns = table_columns(conn)
    problems = [problem for spec in ALL_TABLES for problem in schema_mismatches(spec, columns)]
    if problems:
        raise WarehouseSchemaError(
            f"warehouse {warehouse.path} does not match this version: " + "; ".join(problems)
        )
    if not warehouse.is_ducklake:
        parts.adopt(conn, warehouse.parts_root)
    analysis.create_tables(conn)  # the views read them
    install_views_and_descriptions(
        conn, view_columns=not warehouse.is_ducklake, parts_root=warehouse.scoped_parts_root
    )
    metric_scores.ensure(conn, analysis.write(conn, warehouse.model_prices, warehouse.anomaly_z))
    ((written,),) = conn.execute(sql_text("warehouse/database_file.sql")).fetchall()
    _SCHEMA_ENSURED.add(_schema_key(warehouse, written, schema_version(conn)))


@contextmanager
def conversation_load(
    warehouse: Warehouse, *, filesystem: AbstractFileSystem | None = None
) -> Iterator[ConversationLoad]:
    """One transaction that replaces groups of partitions (each call of the `ConversationLoad`),
    kept only if the block succeeds; `filesystem`: the fsspec one of a lake not on local disk."""
    with warehouse.connect() as conn:
        if filesystem is not None:
            conn.register_filesystem(filesystem)
        ensure_schema(warehouse, conn)
        if warehouse.is_ducklake:
            with transaction(conn):
                yield partial(_replace_tables, conn)
            try:
                ducklake.merge_small_files(conn, ducklake.MERGED_BEYOND)
            except duckdb.Error as exc:  # the load has committed: its files wait for maintenance
                logger.warning("the load committed but merging small files failed: %s", exc)
            return
        garbage.collect_garbage(conn, warehouse.parts_root)
        with transaction(conn), parts.part_writer(conn, warehouse.parts_root) as writer:
            yield partial(_replace_parts, conn, writer)


def upsert_evaluations(
    warehouse: Warehouse,
    app: str,
    day: date,
    batches: Mapping[str, pa.RecordBatch],
    rejects: pa.RecordBatch,
) -> dict[str, int]:
    """Replace runs in each run table, upsert results and operations, add snapshots (`batches`: by
    table): one transaction, no half run."""

    def upsert() -> dict[str, int]:
        written: dict[str, int] = {}
        with warehouse.connect() as conn:
            ensure_schema(warehouse, conn)
            for name, batch in {**batches, "rejects": rejects}.items():
                conn.register(f"incoming_{name}", pa.Table.from_batches([batch]))
            with transaction(conn):
                conn.execute(sql_text("warehouse/stage_evaluation_runs.sql"))
                # every row of a run, its results and their details: replaced together
                for spec in (*EVALUATION_RUN_TABLES, *EVALUATION_RESULT_TABLES):
                    conn.execute(sql_text("warehouse/delete_evaluation_run_rows.sql").format(table=spec.name))
                    written[spec.name] = _insert(
                        conn,
                        "insert_evaluation_run_rows",
                        table=spec.name,
                        relation=f"incoming_{spec.name}",
                    )
                written[EVALUATION_RUN_SNAPSHOTS.name] = _insert(
                    conn, "insert_new_snapshots", table=EVALUATION_RUN_SNAPSHOTS.name
                )
                conn.execute(sql_text("warehouse/delete_replaced_operations.sql"))
                written[EVALUATION_RUN_OPERATIONS.name] = _insert(
                    conn, "insert_new_operations", table=EVALUATION_RUN_OPERATIONS.name
                )
                for source in (RUN_REJECT_SOURCE, RESULT_REJECT_SOURCE, OPERATION_REJECT_SOURCE):
                    conn.execute(
                        sql_text("warehouse/delete_partition_rejects.sql"),
                        {"app": app, "day": day, "source": source},
                    )
                written[REJECTS.name] = _insert(
                    conn, "insert_relation", table=REJECTS.name, relation="incoming_rejects"
                )
                _refresh_evaluated_conversations(warehouse, conn)
                metric_scores.rescore(
                    conn, conn.execute(sql_text("analysis/accepted_run_days.sql")).fetchall()
                )
                conn.execute("DROP TABLE accepted_evaluation_runs")
        return written

    return warehouse.retrying_conflicts(upsert)


def _refresh_evaluated_conversations(warehouse: Warehouse, conn: duckdb.DuckDBPyConnection) -> None:
    """Compute the rollup of evaluated conversations again for the partitions the stored runs'
    conversations can be in: those loaded before their run. (A conversation loaded after its run
    is computed by its own load.)"""
    partitions = conn.execute(sql_text("warehouse/evaluated_run_days.sql")).fetchall()
    if partitions:
        rollups.refresh(conn, partitions, [rollups.EVALUATED_CONVERSATIONS], warehouse.scoped_parts_root)


_SCHEMA_ENSURED: set[tuple[str | int | None, ...] | None] = set()
"""Warehouses (a file's device and inode, or a DuckLake catalog; the schema version) this process
has checked and set up."""


def _schema_key(warehouse: Warehouse, file: str, version: int | None) -> tuple[str | int | None, ...] | None:
    """A DuckLake: its catalog. A DuckDB file: the file (device, inode) written or read."""
    if warehouse.is_ducklake:
        return (warehouse.path, version)
    try:
        stat = os.stat(file)
    except FileNotFoundError:
        return None
    return (stat.st_dev, stat.st_ino, version)


LoadedRows = dict[parts.Partition, dict[str, int]]
"""The rows a load inserted, per (app, day) partition and table (rejects included)."""
ConversationLoad = Callable[[Sequence[PartitionFiles]], LoadedRows]
"""Partitions replaced in an open transaction of `Warehouse.conversation_load`: their rows and
rejects replaced with their files. A conversation is replaced wherever it was loaded (one whose
start moved leaves its old day), at a cost that does not grow with history. The rollups of every
partition touched, the old days included, are computed again."""


def _replace_parts(
    conn: duckdb.DuckDBPyConnection, writer: parts.PartWriter, partitions: Sequence[PartitionFiles]
) -> LoadedRows:
    """A DuckDB file's load: each partition gets new parts (`parts`), and so does each day that a
    moved conversation of the load leaves; found among the parts of the load's apps alone."""
    _stage_targets(conn, partitions)
    latest = {(partition.app, partition.day): partition for partition in partitions}
    left = _partitions_left(conn, writer.root, set(latest))
    inserted = {
        (app, day): {
            spec.name: writer.write("write_part", spec, app, day, source=partition.tables[spec.name])
            for spec in CONVERSATION_TABLES
        }
        for (app, day), partition in latest.items()
    }
    stale = set()  # (table, app, day): a folded part that a moved conversation left
    for app, day in sorted(left, key=lambda partition: (partition[1], partition[0])):
        found = {"app": app, "day": day, "relations": parts.TABLE_NAMES}
        current = dict(conn.execute(sql_text("parts/partition_parts.sql"), found).fetchall())
        for spec in CONVERSATION_TABLES:
            file = current.get(spec.name)
            if file is not None and parts.is_folded(file):
                stale.add((spec.name, app, day))
            elif file is not None:
                writer.write("write_part", spec, app, day, source=str(writer.root / file))
    version = next_version(conn)
    writer.publish(version)
    changed = sorted({*latest, *left})
    folding.fold(conn, writer, {app for app, _ in changed}, version, stale)
    if parts.install_views(conn, writer.root):
        apply_comments(conn)  # a table's view made (again) has none
    for key, rejects in _replace_rejects(conn, partitions).items():
        inserted[key][REJECTS.name] = rejects
    conn.execute(sql_text("warehouse/record_loaded_partitions.sql"))
    rollups.refresh(conn, changed, root=writer.root)  # each chunk reads its partitions' parts
    metric_scores.rescore(conn, changed)
    conn.execute(sql_text("parts/drop_load_conversations.sql"))
    return inserted


def _stage_targets(conn: duckdb.DuckDBPyConnection, partitions: Sequence[PartitionFiles]) -> None:
    """`load_partitions`, by the folders of their files; `load_targets`: each conversation of the
    load once, under the last partition of the load that holds it (a conversation whose start
    moved may sit in two raw days)."""
    conn.execute(sql_text("parts/create_load_conversations.sql"))
    for position, partition in enumerate(partitions):
        values = {
            "app": partition.app,
            "day": partition.day,
            "incoming": partition.tables[CONVERSATIONS.name],
        }
        conn.execute(sql_text("parts/stage_load_partition.sql"), values)
        conn.execute(sql_text("parts/stage_load_conversations.sql"), values | {"position": position})
    conn.execute(sql_text("parts/create_load_targets.sql"))


def _partitions_left(
    conn: duckdb.DuckDBPyConnection, root: Path, replaced: set[tuple[str, date]]
) -> set[tuple[str, date]]:
    """The partitions, not replaced now, that hold a conversation of the load (it moved)."""
    apps = sorted({app for app, _ in replaced})
    listed = conn.execute(sql_text("parts/app_conversation_parts.sql"), {"apps": apps}).fetchall()
    files = {file for app, day, file in listed if (app, day) not in replaced}
    found: set[tuple[str, date]] = set()
    for source, chosen in (
        ("day_parts", [file for file in files if not parts.is_folded(file)]),
        ("folded_parts", [file for file in files if parts.is_folded(file)]),
    ):
        if chosen:
            read = sql_text(f"parts/{source}.sql").format(
                columns="app, partition_date, conversation_name", files="$files"
            )
            found.update(
                conn.execute(
                    sql_text("parts/holding_partitions.sql").format(sources=read),
                    {"files": sorted(str(root / file) for file in chosen)},
                ).fetchall()
            )
    return found - replaced


def _replace_tables(conn: duckdb.DuckDBPyConnection, partitions: Sequence[PartitionFiles]) -> LoadedRows:
    """A DuckLake's load: deletes and one insert per table, which DuckLake writes as new files; a
    conversation in two partitions of the load is kept once, as a DuckDB file's load keeps it."""
    inserted: LoadedRows = {
        (partition.app, partition.day): dict.fromkeys((spec.name for spec in CONVERSATION_TABLES), 0)
        for partition in partitions
    }
    conn.execute(sql_text("warehouse/create_partition_conversations.sql"))
    _stage_targets(conn, partitions)
    apps, days = [partition.app for partition in partitions], [partition.day for partition in partitions]
    bounds = {"first": min(days), "last": max(days), "first_app": min(apps), "last_app": max(apps)}
    conn.execute(sql_text("warehouse/stage_partition_conversations.sql"), bounds)
    ((count, first, last),) = conn.execute(sql_text("warehouse/replaced_partition_dates.sql")).fetchall()
    changed: set[tuple[str, date]] = set()  # (app, day) of every row replaced, old and new
    if count:
        changed.update(_replaced_partitions(conn, first, last))
    for spec in CONVERSATION_TABLES:
        if count:  # nothing to look for in a first load, or a rebuild into an empty warehouse
            conn.execute(
                sql_text("warehouse/delete_partition_rows.sql").format(table=spec.name),
                {"first": first, "last": last},
            )
        files = {"paths": sorted({partition.tables[spec.name] for partition in partitions})}
        kept = sql_text("warehouse/kept_partition_rows.sql")
        counted = sql_text("warehouse/count_kept_rows.sql").format(sources=kept)
        for app, day, rows in conn.execute(counted, files).fetchall():
            inserted[(app, day)][spec.name] = rows
        _insert(conn, "insert_partitions_parquet", files, table=spec.name, relation=kept)
    for key, rejects in _replace_rejects(conn, partitions).items():
        inserted[key][REJECTS.name] = rejects
    conn.execute(sql_text("warehouse/record_loaded_partitions.sql"))
    changed.update(_replaced_partitions(conn, min(days), max(days)))
    rollups.refresh(conn, changed)
    metric_scores.rescore(conn, changed)
    conn.execute(sql_text("warehouse/drop_partition_conversations.sql"))
    conn.execute(sql_text("parts/drop_load_conversations.sql"))
    return inserted


def _replaced_partitions(
    conn: duckdb.DuckDBPyConnection, first: date | None, last: date | None
) -> list[tuple[str, date]]:
    """The (app, day) under which rows of the conversations replaced are loaded, those days
    between `first` and `last`."""
    return conn.execute(
        sql_text("warehouse/replaced_partitions.sql"), {"first": first, "last": last}
    ).fetchall()


def _replace_rejects(
    conn: duckdb.DuckDBPyConnection, partitions: Sequence[PartitionFiles]
) -> dict[parts.Partition, int]:
    """The partitions' conversation rejects (staged in `load_partitions`) in place of those
    recorded before; rejects added per partition."""
    conn.execute(sql_text("warehouse/delete_load_rejects.sql"), {"source": "conversation"})
    files = {"paths": sorted({partition.rejects for partition in partitions})}
    _insert(conn, "insert_parquet", files, table=REJECTS.name)
    return {
        (app, day): rows
        for app, day, rows in conn.execute(sql_text("warehouse/file_rows.sql"), files).fetchall()
    }


def _insert(
    conn: duckdb.DuckDBPyConnection, statement: str, params: object = None, *, table: str, relation: str = ""
) -> int:
    """Run `sql/warehouse/STATEMENT.sql`, which writes `table` (from `relation`); the rows it wrote."""
    text = sql_text(f"warehouse/{statement}.sql").format(table=table, relation=relation)
    rows = conn.execute(text, params).fetchall()
    return int(rows[0][0]) if rows else 0
