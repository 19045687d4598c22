"""Loads write a private copy of the warehouse file, then rename it over the file readers open.

A BI tool holding `CES_WAREHOUSE` open read-only keeps DuckDB's shared lock on it, which a writer
of that file cannot take: so no load writes it in place. A load copies it to a working file,
writes there, checkpoints, and renames the result over the published path in one step. A reader
that opened the file before keeps the state it opened; one that opens after sees the whole load.
No reader ever waits, and no load waits for a reader. The cost is one copy of the file per load.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from pipelines.lake.store import fsync_directory

WORKING_SUFFIX = ".loading"
"""The working copy sits beside the published file (same filesystem, so the rename is atomic)."""


class WarehouseFileError(RuntimeError):
    """The warehouse file cannot be published: a write-ahead log a newer load would orphan."""


def _wal_path(path: str) -> str:
    return f"{path}.wal"


@contextmanager
def working_copy(path: str) -> Iterator[str]:
    """A private copy of the warehouse at `path` (a new file if there is none) to write; published
    over `path` when the block succeeds, discarded when it fails. Callers hold the write lock."""
    _checkpoint_in_place(path)
    working = f"{path}{WORKING_SUFFIX}"
    _remove(working)  # what a killed load left
    if os.path.exists(path):
        shutil.copyfile(path, working)
    try:
        yield working
        if os.path.exists(_wal_path(working)):
            raise WarehouseFileError(f"{working} kept a write-ahead log after its last checkpoint")
        with open(working, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(working, path)
    except BaseException:
        _remove(working)
        raise
    fsync_directory(os.path.dirname(os.path.abspath(path)))


def _checkpoint_in_place(path: str) -> None:
    """A file left with a write-ahead log (a load killed by an older version) gets it folded in
    first: a copy without its log would lose committed rows, and the log beside a new file would
    be replayed onto the wrong data."""
    if not os.path.exists(_wal_path(path)):
        return
    try:
        duckdb.connect(path).close()  # opening replays the log; closing checkpoints it
    except duckdb.IOException as exc:
        raise WarehouseFileError(
            f"{path} has an unapplied write-ahead log ({_wal_path(path)}) and is open in another program: "
            f"close it once so that the next load can apply the log. DuckDB said: {exc}"
        ) from exc


def _remove(working: str) -> None:
    for leftover in (working, _wal_path(working)):
        with contextlib.suppress(FileNotFoundError):
            os.remove(leftover)
