"""The DuckDB warehouse file: schema set-up, partition replacement in one transaction, and row counts."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import duckdb
import pyarrow as pa

from pipelines import stop
from pipelines.config import DEFAULT_WRITE_MEMORY_LIMIT, StorageSettings
from pipelines.errors import ActionableError
from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import (
    ALL_TABLES,
    CONVERSATION_TABLES,
    CONVERSATIONS,
    EVALUATION_RESULT_TABLES,
    EVALUATION_RUN_OPERATIONS,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_TABLES,
    EVALUATION_RUNS,
    OPERATION_REJECT_SOURCE,
    REJECTS,
    RESULT_REJECT_SOURCE,
    RUN_REJECT_SOURCE,
)
from pipelines.warehouse import ducklake, parts, rollups
from pipelines.warehouse.catalog import apply_comments
from pipelines.warehouse.catalog import install as install_views_and_descriptions
from pipelines.warehouse.lock import WarehouseBusyError, warehouse_lock
from pipelines.warehouse.migrations import migrate
from pipelines.warehouse.publish import working_copy
from pipelines.warehouse.transaction import transaction
from pipelines.warehouse.types import schema_mismatches, table_columns

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

T = TypeVar("T")


@dataclass(frozen=True)
class PartitionFiles:
    """One flattened (app, day) partition: its Parquet file per conversation table and its rejects."""

    app: str
    day: date
    tables: Mapping[str, str]
    rejects: str


class WarehouseSchemaError(ActionableError, RuntimeError):
    """The warehouse file's tables do not match the table schemas of this version."""


class WarehouseMemoryError(ActionableError, RuntimeError):
    """A load needed more memory than its DuckDB buffer pool (`CES_WAREHOUSE_MEMORY_LIMIT`) gives."""


@dataclass(frozen=True)
class Warehouse:
    path: str
    """A DuckDB file, or `ducklake:<catalog>` (`pipelines.warehouse.ducklake`)."""
    lock_timeout_seconds: float = 900.0
    write_memory_limit: str = DEFAULT_WRITE_MEMORY_LIMIT
    data_path: str = ""
    """Where a DuckLake warehouse keeps its data files."""
    write_threads: int = 1

    @classmethod
    def from_settings(cls, storage: StorageSettings) -> Warehouse:
        return cls(
            storage.warehouse,
            storage.lock_timeout_seconds,
            storage.write_memory_limit,
            storage.warehouse_data_root,
            storage.write_threads,
        )

    @property
    def write_config(self) -> dict[str, str | int]:
        """DuckDB's settings for a connection that loads (a read-only one keeps DuckDB's own)."""
        return {"memory_limit": self.write_memory_limit, "threads": self.write_threads}

    @property
    def is_ducklake(self) -> bool:
        return ducklake.is_ducklake(self.path)

    def exists(self) -> bool:
        """Whether there is a warehouse to read (a PostgreSQL catalog is taken to exist)."""
        file = ducklake.catalog_file(self.path) if self.is_ducklake else self.path
        return file is None or Path(file).exists()

    @property
    def parts_root(self) -> Path:
        """Where a DuckDB-file warehouse keeps its conversation tables (`parts`)."""
        return parts.parts_root(self.path)

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A DuckLake: its current snapshot, to read or to commit a new one. A DuckDB file, to read:
        the published file as it is, at once; to write: a working copy under the write lock (one
        load at a time), published under the next number when the block succeeds (`publish`)."""
        if self.is_ducklake:
            config = {} if read_only else self.write_config
            with ducklake.attach(self.path, self.data_path, read_only=read_only, config=config) as conn:
                yield conn
            return
        if read_only:
            with _open(self.path, read_only=True) as conn:
                yield conn
            return
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        with (
            warehouse_lock(self.path, timeout_seconds=self.lock_timeout_seconds),
            working_copy(self.path, parts.versions_folder(self.parts_root)) as working,
            _open(working.path, read_only=False, config=self.write_config) as conn,
        ):
            yield conn
            working.version = parts.record_publication(conn)
            conn.execute("CHECKPOINT")  # the file alone holds the load: no log to publish beside it

    def retrying_conflicts(self, load: Callable[[], T]) -> T:
        """`load()` again when a DuckLake commit met a concurrent one that changed the same data
        (a DuckDB file's loads never meet: they queue on its lock)."""
        for attempt in range(1, ducklake.CONFLICT_ATTEMPTS + 1):
            try:
                return load()
            except duckdb.TransactionException as exc:
                if not ducklake.is_conflict(exc) or attempt == ducklake.CONFLICT_ATTEMPTS:
                    raise
                time.sleep(random.uniform(0.05, 0.2) * attempt)
        raise AssertionError("unreachable")

    def ensure_schema(self, conn: duckdb.DuckDBPyConnection) -> None:
        """Create tables and views, describe them, refuse drift; once a process per published file
        and version (the working copy being written is the next published file)."""
        version = _schema_version(conn)
        if self._schema_key(self.path, version) in _SCHEMA_ENSURED:
            return
        migrate(conn)
        columns = table_columns(conn)
        problems = [problem for spec in ALL_TABLES for problem in schema_mismatches(conn, spec, columns)]
        if problems:
            raise WarehouseSchemaError(
                f"warehouse {self.path} does not match this version: " + "; ".join(problems)
            )
        if not self.is_ducklake:
            parts.adopt(conn, self.parts_root)
        install_views_and_descriptions(conn, view_columns=not self.is_ducklake)
        ((written,),) = conn.execute(sql_text("warehouse/database_file.sql")).fetchall()
        _SCHEMA_ENSURED.add(self._schema_key(written, _schema_version(conn)))

    def _schema_key(self, file: str, version: int | None) -> tuple[str | int, ...] | None:
        """A DuckLake: its catalog. A DuckDB file: the file (device, inode) written or read."""
        return (self.path, version) if self.is_ducklake else _file_key(file, version)

    @contextmanager
    def conversation_load(
        self, *, filesystem: AbstractFileSystem | None = None
    ) -> Iterator[ConversationLoad]:
        """One transaction that replaces groups of partitions (`ConversationLoad.replace`), kept
        only if the block succeeds; `filesystem`: the fsspec one of a lake not on local disk."""
        with self.connect() as conn:
            if filesystem is not None:
                conn.register_filesystem(filesystem)
            self.ensure_schema(conn)
            if self.is_ducklake:
                with transaction(conn):
                    yield TableLoad(conn)
                return
            parts.collect_garbage(conn, self.parts_root)
            with transaction(conn), parts.part_writer(conn, self.parts_root) as writer:
                yield PartLoad(conn, writer)

    def upsert_evaluations(
        self,
        app: str,
        day: date,
        run_batches: Mapping[str, pa.RecordBatch],
        snapshots: pa.RecordBatch,
        result_batches: Mapping[str, pa.RecordBatch],
        operations: pa.RecordBatch,
        rejects: pa.RecordBatch,
    ) -> dict[str, int]:
        """Replace runs in each run table, upsert results and operations, add snapshots: one
        transaction, no half run."""

        def upsert() -> dict[str, int]:
            written: dict[str, int] = {}
            with self.connect() as conn:
                self.ensure_schema(conn)
                relations = {
                    "incoming_snapshots": snapshots,
                    "incoming_operations": operations,
                    "incoming_rejects": rejects,
                    **{
                        f"incoming_{name}": batch for name, batch in {**run_batches, **result_batches}.items()
                    },
                }
                for name, batch in relations.items():
                    conn.register(name, pa.Table.from_batches([batch]))
                with transaction(conn):
                    conn.execute(sql_text("warehouse/stage_evaluation_runs.sql"))
                    # every row of a run, its results and their details: replaced together
                    for spec in (*EVALUATION_RUN_TABLES, *EVALUATION_RESULT_TABLES):
                        conn.execute(
                            sql_text("warehouse/delete_evaluation_run_rows.sql").format(table=spec.name)
                        )
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
                    conn.execute("DROP TABLE accepted_evaluation_runs")
            return written

        return self.retrying_conflicts(upsert)

    def finished_operations(self, app: str) -> set[str]:
        """Names of `app`'s evaluation run operations stored as done (none before the first load)."""
        if not self.exists():
            return set()
        with self.connect(read_only=True) as conn:
            if EVALUATION_RUN_OPERATIONS.name not in _tables(conn):
                return set()
            rows = conn.execute(sql_text("warehouse/finished_operations.sql"), {"app": app}).fetchall()
            return {name for (name,) in rows}

    def unfinished_evaluation_runs(self) -> list[tuple[str, str]]:
        """(app, run name) of each run not COMPLETED, ERROR or CANCELLED."""
        if not self.exists():
            return []
        with self.connect(read_only=True) as conn:
            if EVALUATION_RUNS.name not in _tables(conn):
                return []
            rows = conn.execute(sql_text("warehouse/unfinished_evaluation_runs.sql")).fetchall()
            return [(app, name) for app, name in rows]

    def row_counts(self) -> dict[str, int]:
        """Rows per contract table (0 for a table not created yet)."""
        none = {spec.name: 0 for spec in ALL_TABLES}
        if not self.exists():
            return none
        try:
            with self.connect(read_only=True) as conn:
                existing = _relations(conn)
                count_sql = sql_text("warehouse/count_rows.sql")
                return {
                    name: conn.execute(count_sql.format(table=name)).fetchone()[0] if name in existing else 0
                    for name in none
                }
        except ducklake.DuckLakeMissingError:
            return none


class ConversationLoad(Protocol):
    """Partitions replaced in an open transaction of `Warehouse.conversation_load`."""

    def replace(self, partitions: Sequence[PartitionFiles]) -> dict[str, int]:
        """Replace these partitions' rows and rejects with their files (rows inserted per table):
        a conversation is replaced wherever it was loaded (one whose start moved leaves its old
        day), at a cost that does not grow with history. The rollups of every partition touched,
        the old days included, are computed again."""
        ...


class PartLoad:
    """A DuckDB file's load: each partition gets new parts (`parts`), and so does each day that a
    moved conversation of the load leaves; found among the parts of the load's apps alone."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, writer: parts.PartWriter):
        self._conn, self._writer = conn, writer

    def replace(self, partitions: Sequence[PartitionFiles]) -> dict[str, int]:
        conn, writer = self._conn, self._writer
        conn.execute(sql_text("parts/create_load_conversations.sql"))
        for position, partition in enumerate(partitions):
            conn.execute(
                sql_text("parts/stage_load_conversations.sql"),
                {
                    "app": partition.app,
                    "day": partition.day,
                    "incoming": partition.tables[CONVERSATIONS.name],
                    "position": position,
                },
            )
        conn.execute(sql_text("parts/create_load_targets.sql"))
        latest = {(partition.app, partition.day): partition for partition in partitions}
        left = self._partitions_left(set(latest))
        inserted = {spec.name: 0 for spec in CONVERSATION_TABLES}
        for (app, day), partition in latest.items():
            for spec in CONVERSATION_TABLES:
                source = partition.tables[spec.name]
                inserted[spec.name] += writer.write("write_part", spec, app, day, source=source)
        for app, day in sorted(left, key=lambda partition: (partition[1], partition[0])):
            current = dict(
                conn.execute(sql_text("parts/partition_parts.sql"), {"app": app, "day": day}).fetchall()
            )
            for spec in CONVERSATION_TABLES:
                if spec.name in current:
                    source = str(writer.root / current[spec.name])
                    writer.write("write_part", spec, app, day, source=source)
        writer.publish(parts.next_version(conn))
        parts.install_views(conn, writer.root)
        apply_comments(conn)  # a view made again has lost them
        inserted[REJECTS.name] = _replace_rejects(conn, partitions)
        changed = sorted({*latest, *left})
        parts.install_views(conn, writer.root, only=changed)  # the rollups read these alone
        rollups.refresh(conn, changed)
        parts.drop_temporary_views(conn)
        conn.execute(sql_text("parts/drop_load_conversations.sql"))
        return inserted

    def _partitions_left(self, replaced: set[tuple[str, date]]) -> set[tuple[str, date]]:
        """The partitions, not replaced now, that hold a conversation of the load (it moved)."""
        apps = sorted({app for app, _ in replaced})
        listed = self._conn.execute(sql_text("parts/app_conversation_parts.sql"), {"apps": apps}).fetchall()
        files = [str(self._writer.root / file) for app, day, file in listed if (app, day) not in replaced]
        if not files:
            return set()
        found = self._conn.execute(sql_text("parts/holding_partitions.sql"), {"files": files}).fetchall()
        return {(app, day) for app, day in found}


class TableLoad:
    """A DuckLake's load: deletes and one insert per table, which DuckLake writes as new files."""

    def __init__(self, conn: duckdb.DuckDBPyConnection):
        self._conn = conn

    def replace(self, partitions: Sequence[PartitionFiles]) -> dict[str, int]:
        conn = self._conn
        inserted: dict[str, int] = {}
        conn.execute(sql_text("warehouse/create_partition_conversations.sql"))
        for partition in partitions:
            conn.execute(
                sql_text("warehouse/stage_partition_conversations.sql"),
                {
                    "app": partition.app,
                    "day": partition.day,
                    "incoming": partition.tables[CONVERSATIONS.name],
                },
            )
        ((count, first, last),) = conn.execute(sql_text("warehouse/replaced_partition_dates.sql")).fetchall()
        changed: set[tuple[str, date]] = set()  # (app, day) of every row replaced, old and new
        if count:
            changed.update(self._replaced_partitions(first, last))
        for spec in CONVERSATION_TABLES:
            if count:  # nothing to look for in a first load, or a rebuild into an empty warehouse
                conn.execute(
                    sql_text("warehouse/delete_partition_rows.sql").format(table=spec.name),
                    {"first": first, "last": last},
                )
            paths = [partition.tables[spec.name] for partition in partitions]
            inserted[spec.name] = _insert(
                conn, "insert_partitions_parquet", {"paths": paths}, table=spec.name
            )
        inserted[REJECTS.name] = _replace_rejects(conn, partitions)
        days = [partition.day for partition in partitions]
        changed.update(self._replaced_partitions(min(days), max(days)))
        rollups.refresh(conn, changed)
        conn.execute("DROP TABLE partition_conversations")
        return inserted

    def _replaced_partitions(self, first: date | None, last: date | None) -> list[tuple[str, date]]:
        """The (app, day) under which rows of the conversations replaced are loaded, those days
        between `first` and `last`."""
        found = self._conn.execute(
            sql_text("warehouse/replaced_partitions.sql"), {"first": first, "last": last}
        ).fetchall()
        return [(app, day) for app, day in found]


def _replace_rejects(conn: duckdb.DuckDBPyConnection, partitions: Sequence[PartitionFiles]) -> int:
    """The partitions' conversation rejects in place of those recorded before; rejects added."""
    for partition in partitions:
        conn.execute(
            sql_text("warehouse/delete_partition_rejects.sql"),
            {"app": partition.app, "day": partition.day, "source": "conversation"},
        )
    paths = [partition.rejects for partition in partitions]
    return _insert(conn, "insert_parquet", {"paths": paths}, table=REJECTS.name)


_SCHEMA_ENSURED: set[tuple[str | int | None, ...] | None] = set()
"""Warehouses (a file's device and inode, or a DuckLake catalog; the schema version) this process
has checked and set up."""


def _file_key(path: str, version: int | None) -> tuple[int, int, int | None] | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return (stat.st_dev, stat.st_ino, version)


def _schema_version(conn: duckdb.DuckDBPyConnection) -> int | None:
    if "schema_version" not in _tables(conn):
        return None
    ((version,),) = conn.execute(sql_text("warehouse/current_schema_version.sql")).fetchall()
    return version


@contextmanager
def _open(
    path: str, *, read_only: bool, config: Mapping[str, str | int] | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection in UTC, with a load's `config`; DuckDB's errors made plain."""
    config = dict(config or {})
    try:
        conn = duckdb.connect(path, read_only=read_only, config=config)
    except duckdb.IOException as exc:
        if "version number" in str(exc):
            raise WarehouseSchemaError(
                f"cannot open {path}: it was written by another DuckDB version than this one "
                f"({duckdb.__version__}). Move it aside and rebuild it from the lake: `ces-pipeline rebuild`."
            ) from exc
        raise WarehouseBusyError(
            f"cannot open {path}: {exc}. Is it open for writing in another program? BI tools open it "
            'read-only (see the README\'s "Connect a BI tool").'
        ) from exc
    stop.track(conn)
    try:
        conn.execute("SET TimeZone = 'UTC'")
        yield conn
    except duckdb.OutOfMemoryException as exc:
        if read_only:
            raise
        raise WarehouseMemoryError(
            f"a load of {path} needs more memory than CES_WAREHOUSE_MEMORY_LIMIT "
            f"({config.get('memory_limit')}) gives it: raise it (e.g. 1GB), or ask for smaller pages "
            f"(CES_PAGE_SIZE). DuckDB said: {str(exc).splitlines()[0][:300]}"
        ) from exc
    finally:
        stop.untrack(conn)
        conn.close()


def _tables(conn: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in conn.execute(sql_text("warehouse/list_tables.sql")).fetchall()}


def _relations(conn: duckdb.DuckDBPyConnection) -> set[str]:
    """Tables and views (a DuckDB file's conversation tables are views of their parts)."""
    return {row[0] for row in conn.execute(sql_text("warehouse/list_relations.sql")).fetchall()}


def _insert(
    conn: duckdb.DuckDBPyConnection, statement: str, params: object = None, *, table: str, relation: str = ""
) -> int:
    """Run `sql/warehouse/STATEMENT.sql`, which writes `table` (from `relation`); the rows it wrote."""
    text = sql_text(f"warehouse/{statement}.sql").format(table=table, relation=relation)
    rows = conn.execute(text, params).fetchall()
    return int(rows[0][0]) if rows else 0
