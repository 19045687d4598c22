"""One load at a time: each publishes a copy of the file it read, so `<file>.lock` queues writers
(readers never take it: they open the published file, which no load writes in place)."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pipelines.errors import ActionableError


class WarehouseBusyError(ActionableError, RuntimeError):
    """The warehouse stayed locked by another process for longer than the wait allowed."""


@contextmanager
def warehouse_lock(database_path: str, *, timeout_seconds: float) -> Iterator[None]:
    lock_path = f"{database_path}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_seconds
        delay = 0.01
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WarehouseBusyError(
                        f"could not write to {database_path}: another ingest held it for more than "
                        f"{timeout_seconds:g} s (lock file {lock_path})"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
