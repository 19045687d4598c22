"""One load at a time: each publishes a copy of the file it read, so `<file>.lock` queues writers
(readers never take it: they open the published file, which no load writes in place).

The lock is the kernel's (`flock`, through `filelock`), so a writer killed outright frees it
with its process; hence no soft-lock fallback, and the lock file stays in place between loads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from filelock import FileLock, Timeout

from pipelines.errors import ActionableError


class WarehouseBusyError(ActionableError, RuntimeError):
    """The warehouse stayed locked by another process for longer than the wait allowed, or
    another program holds the file open for writing."""


@contextmanager
def warehouse_lock(database_path: str, *, timeout_seconds: float) -> Iterator[None]:
    lock_path = f"{database_path}.lock"
    lock = FileLock(
        lock_path, timeout=timeout_seconds, mode=0o644, fallback_to_soft=False, preserve_lock_file=True
    )
    try:
        lock.acquire()
    except Timeout:
        raise WarehouseBusyError(
            f"could not write to {database_path}: another ingest held it for more than "
            f"{timeout_seconds:g} s (lock file {lock_path})"
        ) from None
    try:
        yield
    finally:
        lock.release()
