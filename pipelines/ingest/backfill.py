"""Bulk backfill: many partitions flattened in worker processes, loaded into the warehouse in commit windows.

A partition run (the Dagster path) flattens and loads one (app, day) at a time. Re-deriving a
long history that way leaves one of the two cores idle and loads each partition alone, which
costs DuckDB twice the CPU of a bulk insert (see `ConversationLoad`). Here the flatten step of
every partition runs in a pool of processes (Python holds the GIL while it walks JSON), and
this process inserts finished partitions, several at a time, while the workers go on, into a
transaction it commits every `COMMIT_CONVERSATIONS` conversations. Memory stays that of one
partition batch per worker: the Parquet files on disk are the hand-over.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import multiprocessing
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.ingest.load import open_conversation_load, replace_partitions
from pipelines.lake.store import Lake
from pipelines.warehouse.duck import ConversationLoad, Warehouse

LOADER_DUCKDB_CONFIG = {"threads": 1, "memory_limit": "96MB", "block_allocator_memory": "96MB"}
"""The loader shares the machine with the workers: one DuckDB thread (two cost 30% more CPU
for the same insert) and a small buffer pool (a bulk insert otherwise keeps ~270 MB of
written blocks cached). Inserting the 20,000-conversation benchmark's Parquet costs the
loader 3.7 s of CPU at 64 MB, 3.4 s at 96 MB, 3.3 s at 128 MB and 2.9 s at 256 MB, as
DuckDB spills less of the open transaction's rows. At 96 MB the benchmark's process tree
peaked at ~350 MB (~320 MB at 64 MB, ~380 MB at 128 MB); ~365 MB with the pool's memory kept
(below) and the lake's larger row groups.

The pool keeps its memory (`block_allocator_memory`, as large as the limit, freed when the
connection closes): a bulk insert writes and evicts blocks all along, and each new block
otherwise came from fresh pages, faulted in at ~3 µs per 4 KiB on a small VM. The loader's
page faults fall from ~222,000 to ~104,000 and its CPU by ~10% (3.15 → 2.85 s), for ~5 MB
more resident; a single partition's load sees no difference, so other connections go
without."""

LAST_LOAD_DUCKDB_CONFIG = {"preserve_insertion_order": False}
"""The last group is loaded once the workers have exited, with as many DuckDB threads as there
were workers (the cores the backfill was given): with insertion order not kept, DuckDB
inserts on all of them (~25% sooner on two)."""

COMMIT_CONVERSATIONS = 122_880
"""Conversations inserted before the load transaction commits (and at the end): a row group
of the smallest table. A transaction with fewer rows than that in a table goes through the
write-ahead log and is compressed again by the checkpoint; in one transaction, the inserts
of a 20,000-conversation backfill cost the loader ~20% less CPU than a commit per group of
three partitions. An interrupted backfill keeps every window committed before it, and the
warehouse lock is free between windows."""

WORKER_MODULES = (
    "pandas",
    "pyarrow.compute",
    "pyarrow.parquet",
    "pipelines.ingest.flatten",
    "pipelines.ingest.fetch",
    "pipelines.ingest.stream",
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
    """Inserts of groups of partitions: fewer than partitions when they were loaded together."""
    commits: int = 0
    """Warehouse transactions committed: a window of `COMMIT_CONVERSATIONS` conversations each."""
    loaded: dict[str, int] = field(default_factory=dict)
    """Rows inserted per table, over all loads."""
    failed: dict[tuple[str, date], str] = field(default_factory=dict)
    """Partitions whose task failed, with the error: the others went on."""


_M_ARENA_MAX = -8
"""glibc's `mallopt` parameter for the most malloc arenas a process may have (malloc.h)."""


def _one_malloc_arena() -> None:
    """Let every thread of this process allocate from glibc's main arena (each worker's
    initializer; Arrow allocates there too, see the package's `ARROW_DEFAULT_MEMORY_POOL`).

    An ingest worker's fetch threads (paging, hydrations) would each get an arena of their
    own, where the multi-megabyte buffers of received pages leave freed memory that is not
    handed back: with one arena, the bulk ingest's process tree peaks ~13 MB lower (402-416
    -> 391-397 MB at 20,000 conversations), with fewer page faults (32-33 -> 28-30 per
    conversation) and ~1% less CPU. The threads hold the GIL while they allocate most of
    it, so they seldom wait for the arena's lock.
    Elsewhere than glibc (no `mallopt`, or one that ignores the parameter) nothing changes.
    """
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):  # a C library without mallopt
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 1)


def flatten_task(lake_root: str, app: str, day: date) -> dict[str, Any]:
    """The flatten step of one partition, in a worker."""
    return {"rows": flatten_conversation_partition(Lake(lake_root), app, day).rows}


def largest_first(lake: Lake, partitions: Sequence[tuple[str, date]]) -> list[tuple[str, date]]:
    """The partitions with the largest raw files first; those without one (not fetched yet)
    after them, each group in the order given.

    The workers take partitions in this order, so the last to start are the smallest: the
    backfill does not end with one worker flattening a large day while the other sits idle,
    and the insert left for after the workers is a small one.
    """
    sizes = lake.raw_partition_sizes(CONVERSATIONS_DATASET)
    return sorted(partitions, key=lambda partition: sizes.get(partition, 0), reverse=True)  # stable


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


class _LoadWindows:
    """Groups of partitions inserted into an open transaction, committed every
    `commit_conversations` conversations; a failure rolls back only the open window."""

    def __init__(self, lake: Lake, warehouse: Warehouse, commit_conversations: int):
        self._lake, self._warehouse, self._commit_conversations = lake, warehouse, commit_conversations
        self._window: ExitStack | None = None
        self._load: ConversationLoad | None = None
        self._conversations = 0
        self.commits = 0

    def insert(self, partitions: Sequence[tuple[str, date]], **settings: str | int | bool) -> dict[str, int]:
        """Insert the partitions (with these DuckDB settings from now on); rows per table."""
        if self._load is None:
            self._window = ExitStack()
            self._load = self._window.enter_context(open_conversation_load(self._lake, self._warehouse))
        if settings:
            self._load.configure(**settings)
        inserted = replace_partitions(self._load, self._lake, partitions)
        self._conversations += inserted.get("conversations", 0)
        if self._conversations >= self._commit_conversations:
            self.commit()
        return inserted

    def commit(self) -> None:
        if self._window is not None:
            window, self._window, self._load, self._conversations = self._window, None, None, 0
            window.close()
            self.commits += 1

    def __enter__(self) -> _LoadWindows:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if exc_info[0] is None:
            self.commit()
        elif self._window is not None:
            window, self._window, self._load = self._window, None, None
            window.__exit__(*exc_info)  # rolls the open window back


def backfill_partitions(
    lake: Lake,
    warehouse: Warehouse,
    partitions: Sequence[tuple[str, date]],
    *,
    workers: int,
    task: PartitionTask = flatten_task,
    task_args: Sequence[Any] = (),
    commit_conversations: int = COMMIT_CONVERSATIONS,
    start_method: str | None = None,
    on_loaded: Callable[[list[tuple[str, date]], dict[str, int]], None] | None = None,
) -> BackfillResult:
    """Run `task` for every partition in `workers` processes, the largest first (`largest_first`),
    and insert the partitions it produced into the warehouse as they finish (those finished
    while an insert ran go in the next one together; the last once the workers have exited),
    committing every `commit_conversations` conversations and at the end.

    A partition whose task fails is recorded in `failed` with its error, never loaded, and
    never stops the others; a failing insert or commit raises, after the partitions not yet
    loaded are given up: the warehouse holds every window committed before, and nothing of
    the open one.
    `on_loaded` hears of each group inserted and its rows per table (for progress displays).
    """
    result = BackfillResult()
    ready: list[tuple[str, date]] = []

    def load(windows: _LoadWindows, **settings: str | int | bool) -> None:
        nonlocal ready
        if not ready:
            return
        inserted = windows.insert(ready, **settings)
        for table, count in inserted.items():
            result.loaded[table] = result.loaded.get(table, 0) + count
        result.loads += 1
        if on_loaded is not None:
            on_loaded(ready, inserted)
        ready = []

    loader = warehouse.with_config(**LOADER_DUCKDB_CONFIG)
    with _LoadWindows(lake, loader, commit_conversations) as windows:
        with ProcessPoolExecutor(
            max_workers=max(1, workers),
            mp_context=worker_context(start_method),
            initializer=_one_malloc_arena,
        ) as pool:
            running: dict[Future[dict[str, Any]], tuple[str, date]] = {
                pool.submit(task, lake.root, app, day, *task_args): (app, day)
                for app, day in largest_first(lake, partitions)
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
                if running:
                    load(windows)
        load(windows, threads=max(1, workers), **LAST_LOAD_DUCKDB_CONFIG)
    result.commits = windows.commits
    return result
