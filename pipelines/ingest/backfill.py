"""Bulk backfill: many partitions flattened in worker processes, loaded into the warehouse in groups.

A partition run (the Dagster path) flattens and loads one (app, day) at a time. Re-deriving a
long history that way leaves one of the two cores idle and loads each partition alone, which
costs DuckDB twice the CPU of a bulk insert (see `Warehouse.replace_conversation_partitions`).
Here the flatten step of every partition runs in a pool of processes (Python holds the GIL
while it walks JSON), and this process loads finished partitions, several per transaction,
while the workers go on. Memory stays that of one partition batch per worker: the Parquet
files on disk are the hand-over.
"""

from __future__ import annotations

import importlib
import multiprocessing
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pyarrow as pa

from pipelines.ingest.flatten import flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.warehouse.duck import Warehouse

LOADER_DUCKDB_CONFIG = {"threads": 1, "memory_limit": "64MB"}
"""The loader shares the machine with the workers: one DuckDB thread (two cost 30% more CPU
for the same insert) and a small buffer pool (a bulk insert otherwise keeps ~270 MB of
written blocks cached). At 64 MB the 20,000-conversation benchmark's process tree peaks at
~355 MB; 32 MB saves ~30 MB but makes the loader, the last to finish, ~20% slower; at
128 MB the tree passes 400 MB."""

LAST_LOAD_DUCKDB_CONFIG = {"preserve_insertion_order": False}
"""The last group is loaded once the workers have exited, with as many DuckDB threads as there
were workers (the cores the backfill was given): with insertion order not kept, DuckDB
inserts on all of them (~25% sooner on two)."""

LOAD_ROWS = 245_760
"""Rows (in the largest table) a group of finished partitions waits for before it is loaded:
two DuckDB row groups, enough for the insert to bypass the write-ahead log."""

WORKER_MODULES = (
    "pandas",
    "pyarrow.compute",
    "pyarrow.parquet",
    "pipelines.ingest.flatten",
    "pipelines.ingest.fetch",
)
"""Imported before the workers are forked (from this process or from the fork server), so
they share those pages instead of each importing its own copy (pyarrow imports pandas on first
use)."""

PartitionTask = Callable[..., dict[str, Any]]
"""Runs in a worker: (lake root, app, day, *extra) → a summary holding "rows", the partition's
rows per table (and whatever else the caller wants to know)."""


@dataclass
class BackfillResult:
    """What a backfill did, partition by partition."""

    partitions: dict[tuple[str, date], dict[str, Any]] = field(default_factory=dict)
    """Each partition's task summary (its "rows" per table)."""
    loads: int = 0
    """Warehouse transactions: fewer than partitions when they were loaded together."""
    loaded: dict[str, int] = field(default_factory=dict)
    """Rows inserted per table, over all loads."""
    failed: dict[tuple[str, date], str] = field(default_factory=dict)
    """Partitions whose task failed, with the error: the others went on."""


def _start_worker() -> None:
    """Arrow allocations from the system allocator: a flatten worker peaks 25 MB lower than
    with Arrow's jemalloc pool, which keeps freed pages around, at the same speed."""
    pa.set_memory_pool(pa.system_memory_pool())


def flatten_task(lake_root: str, app: str, day: date) -> dict[str, Any]:
    """The flatten step of one partition, in a worker."""
    return {"rows": flatten_conversation_partition(Lake(lake_root), app, day).rows}


def import_worker_modules() -> None:
    """Import what the workers run, here: a missing module fails once, clearly, rather than in
    every worker, and forked workers share the pages."""
    for module in WORKER_MODULES:
        importlib.import_module(module)


def worker_context(start_method: str | None = None) -> multiprocessing.context.BaseContext:
    """Workers that share the pipeline's imported modules with their parent.

    By default (None) this process is forked once it has imported those modules, on Linux
    and when it runs no other thread: the workers share its pages (~110 MB of libraries
    counted once) and, being its children, their CPU time is in its `wait4` usage. Elsewhere,
    or in a process with threads (forking one can deadlock a worker on a lock another thread
    held), a fork server holding the modules starts them instead: safe, and the workers still
    share its pages, though not this process's.
    """
    import_worker_modules()
    if start_method is None:
        forkable = sys.platform == "linux" and threading.active_count() == 1
        start_method = "fork" if forkable else "forkserver"
    context = multiprocessing.get_context(start_method)
    if start_method == "forkserver":
        context.set_forkserver_preload(list(WORKER_MODULES))
    return context


def backfill_partitions(
    lake: Lake,
    warehouse: Warehouse,
    partitions: Sequence[tuple[str, date]],
    *,
    workers: int,
    task: PartitionTask = flatten_task,
    task_args: Sequence[Any] = (),
    load_rows: int = LOAD_ROWS,
    start_method: str | None = None,
    on_loaded: Callable[[list[tuple[str, date]], dict[str, int]], None] | None = None,
) -> BackfillResult:
    """Run `task` for every partition in `workers` processes, and load the partitions it
    produced into the warehouse as they finish, grouped until `load_rows` rows are waiting
    (the last group once the workers have exited).

    A partition whose task fails is recorded in `failed` with its error, never loaded, and
    never stops the others; a failing load raises (after the partitions not yet loaded are
    given up: the warehouse holds every group loaded before).
    `on_loaded` hears of each group loaded and its rows per table (for progress displays).
    """
    result = BackfillResult()
    loader = warehouse.with_config(**LOADER_DUCKDB_CONFIG)
    ready: list[tuple[str, date]] = []
    waiting_rows = 0

    def load(into: Warehouse) -> None:
        nonlocal ready, waiting_rows
        if not ready:
            return
        inserted = load_conversation_partitions(lake, into, ready)
        for table, count in inserted.items():
            result.loaded[table] = result.loaded.get(table, 0) + count
        result.loads += 1
        if on_loaded is not None:
            on_loaded(ready, inserted)
        ready, waiting_rows = [], 0

    with ProcessPoolExecutor(
        max_workers=max(1, workers), mp_context=worker_context(start_method), initializer=_start_worker
    ) as pool:
        running: dict[Future[dict[str, Any]], tuple[str, date]] = {
            pool.submit(task, lake.root, app, day, *task_args): (app, day) for app, day in partitions
        }
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                partition = running.pop(future)
                try:
                    summary = future.result()
                except Exception as exc:  # recorded and reported; the other partitions go on
                    result.failed[partition] = f"{type(exc).__name__}: {exc}"
                    continue
                result.partitions[partition] = summary
                ready.append(partition)
                waiting_rows += max(summary["rows"].values(), default=0)
            if waiting_rows >= load_rows and running:
                load(loader)
    load(loader.with_config(threads=max(1, workers), **LAST_LOAD_DUCKDB_CONFIG))
    return result
