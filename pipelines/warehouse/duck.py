"""The warehouse: a DuckDB file or a DuckLake, and its connections (to read at once, or to write
a working copy published whole); what a load writes is `loads`."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import duckdb

from pipelines import stop
from pipelines.config import DEFAULT_ANOMALY_Z, DEFAULT_WRITE_MEMORY_LIMIT, StorageSettings
from pipelines.errors import ActionableError, UsageError
from pipelines.sqlfiles import sql_text
from pipelines.warehouse import ducklake
from pipelines.warehouse.analysis import DEFAULT_MODEL_PRICES
from pipelines.warehouse.lock import warehouse_lock
from pipelines.warehouse.publish import (
    BLOCK_SIZE,
    PARTS_SUFFIX,
    VERSIONS,
    WarehouseFileError,
    open_refused,
    record_publication,
    working_copy,
)

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from pipelines.warehouse.loads import ConversationLoad

T = TypeVar("T")


NEW_FILE = {"default_block_size": BLOCK_SIZE}
"""A warehouse file created by a load is written in `BLOCK_SIZE` blocks."""


class WarehouseSchemaError(ActionableError, RuntimeError):
    """The warehouse file's tables do not match the table schemas of this version."""


class NoWarehouseError(UsageError, FileNotFoundError):
    """A read of a warehouse no load has created yet."""


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
    model_prices: str = DEFAULT_MODEL_PRICES
    """The price file each load writes into `model_prices` (`pipelines.warehouse.analysis`)."""
    anomaly_z: float = DEFAULT_ANOMALY_Z
    """The robust z-score beyond which `metric_anomalies` flags a day."""

    @classmethod
    def from_settings(cls, storage: StorageSettings) -> Warehouse:
        return cls(
            storage.warehouse,
            storage.lock_timeout_seconds,
            storage.write_memory_limit,
            storage.warehouse_data_root,
            storage.write_threads,
            storage.model_prices or DEFAULT_MODEL_PRICES,
            storage.anomaly_z,
        )

    @property
    def write_config(self) -> dict[str, str | int]:
        """DuckDB's settings for a connection that loads (a read-only one keeps DuckDB's own).
        A load reads each Parquet file once, so DuckDB's cache of the files it read only fills the
        buffer pool: without it a rollup recomputed over 2M conversations' parts peaks at 538 MB
        instead of 1,071 MB, in the same 50 s."""
        return {
            "memory_limit": self.write_memory_limit,
            "threads": self.write_threads,
            "enable_external_file_cache": False,
        }

    @property
    def is_ducklake(self) -> bool:
        return ducklake.is_ducklake(self.path)

    def exists(self) -> bool:
        """Whether there is a warehouse to read (a PostgreSQL catalog is taken to exist)."""
        file = ducklake.catalog_file(self.path) if self.is_ducklake else self.path
        return file is None or Path(file).exists()

    @property
    def parts_root(self) -> Path:
        """Where a DuckDB-file warehouse keeps its conversation tables (`parts`); absolute, as the
        views name their parts by the paths every reader opens."""
        return Path(os.path.abspath(f"{self.path}{PARTS_SUFFIX}"))

    @property
    def scoped_parts_root(self) -> Path | None:
        """The parts a read of a few partitions can list alone (`parts.reading_only`); None on a
        DuckLake, whose conversation tables are tables."""
        return None if self.is_ducklake else self.parts_root

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A DuckLake: its current snapshot, to read or to commit a new one. A DuckDB file, to read:
        the published file as it is, at once; to write: a working copy under the write lock (one
        load at a time), published under the next number when the block succeeds (`publish`).
        Reading a warehouse that does not exist yet raises `NoWarehouseError`."""
        if read_only and not self.exists():
            raise NoWarehouseError(f"no warehouse at {self.path}: run `ces-pipeline ingest` first")
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
            working_copy(self.path, self.parts_root / VERSIONS, self.write_config) as working,
            _open(working.path, read_only=False, config=self.write_config | NEW_FILE) as conn,
        ):
            yield conn
            working.version = record_publication(conn)
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

    # The write side lives in `loads` (pyarrow, the table schemas), imported by the first call:
    # a read (`ces-pipeline query`, a BI tool's process, the MCP server) never pays for it.

    def ensure_schema(self, conn: duckdb.DuckDBPyConnection) -> None:
        """Create tables and views, describe them, refuse drift (`loads.ensure_schema`)."""
        from pipelines.warehouse import loads

        loads.ensure_schema(self, conn)

    def conversation_load(
        self, *, filesystem: AbstractFileSystem | None = None
    ) -> AbstractContextManager[ConversationLoad]:
        """One transaction that replaces groups of partitions (`loads.conversation_load`)."""
        from pipelines.warehouse import loads

        return loads.conversation_load(self, filesystem=filesystem)

    def unfinished_evaluation_runs(self) -> list[tuple[str, str]]:
        """(app, run name) of each run not COMPLETED, ERROR or CANCELLED."""
        from pipelines.warehouse import stored

        return stored.unfinished_evaluation_runs(self)

    def maintain(self) -> tuple[ducklake.LakeState, ducklake.LakeState] | None:
        """A DuckLake's maintenance (`ducklake.maintain`): its state before and after. None for a
        DuckDB file, whose loads delete the parts they replaced once no reader holds them."""
        if not self.is_ducklake:
            return None
        with self.connect() as conn:
            return ducklake.maintain(conn)

    def row_counts(self) -> dict[str, int]:
        """Rows per contract table (0 for a table not created yet)."""
        from pipelines.warehouse import stored

        return stored.row_counts(self)


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
        raise open_refused(path, exc) from exc
    try:
        with stop.interruptible(conn):
            conn.execute("SET TimeZone = 'UTC'")
            yield conn
    except duckdb.IOException as exc:
        if not read_only or "No files found that match the pattern" not in str(exc):
            raise
        raise parts_missing(path, exc) from exc
    except duckdb.OutOfMemoryException as exc:
        if read_only:
            raise
        raise WarehouseMemoryError(
            f"a load of {path} needs more memory than CES_WAREHOUSE_MEMORY_LIMIT "
            f"({config.get('memory_limit')}) gives it: raise it (e.g. 1GB), or ask for smaller pages "
            f"(CES_PAGE_SIZE). DuckDB said: {str(exc).splitlines()[0][:300]}"
        ) from exc


def parts_missing(path: str, refusal: duckdb.IOException) -> WarehouseFileError:
    """A read of `path` that met a part its file names but that is not there: the file moved or
    copied without its parts folder (its views name the parts by the path it was loaded at), or
    the folder deleted."""
    missing = str(refusal).split('pattern "', 1)[-1].split('"', 1)[0]
    return WarehouseFileError(
        f"{path} names a Parquet part that is not there ({missing}): the conversation tables are "
        f"in the folder `{Path(path).name}{PARTS_SUFFIX}` beside the file, named where the file was "
        "loaded. If the two were moved, keep them together and load any one day to name the parts "
        "where they are now (e.g. `ces-pipeline rebuild --since 2026-11-01 --until 2026-11-02 "
        "--skip-evaluations`); if the parts are gone, `ces-pipeline rebuild` writes them again "
        "from the lake."
    )


def tables(conn: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in conn.execute(sql_text("warehouse/list_tables.sql")).fetchall()}


def relations(conn: duckdb.DuckDBPyConnection) -> set[str]:
    """Tables and views (a DuckDB file's conversation tables are views of their parts)."""
    return {row[0] for row in conn.execute(sql_text("warehouse/list_relations.sql")).fetchall()}


def schema_version(conn: duckdb.DuckDBPyConnection) -> int | None:
    if "schema_version" not in tables(conn):
        return None
    ((version,),) = conn.execute(sql_text("warehouse/current_schema_version.sql")).fetchall()
    return version
