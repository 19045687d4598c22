"""Stopping a command at once: a signal (Ctrl-C, SIGTERM) may reach a process whose main thread
is inside a DuckDB query, where no Python signal handler runs until the query returns (hours,
for a large one; Dagster's own handler only takes note). So the signal's wakeup byte is read by
a thread of its own, which interrupts every open DuckDB connection and records that a stop was
asked: the run in progress fails at once, and no further run starts (`runs.execute_runs`)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Protocol

requested = threading.Event()
"""Set once Ctrl-C or SIGTERM came."""

_STOPPING = {signal.SIGINT, signal.SIGTERM}


class Interruptible(Protocol):
    def interrupt(self) -> None: ...


_open: set[Interruptible] = set()
_lock = threading.Lock()


def track(conn: Interruptible) -> None:
    with _lock:
        _open.add(conn)


def untrack(conn: Interruptible) -> None:
    with _lock:
        _open.discard(conn)


_watching: list[int] = []
"""The write end of the wakeup pipe, once a thread reads it."""


def watch_signals() -> None:
    """A command starts: no stop asked yet, and the signals' wakeup bytes read on a thread of
    their own, one per process (call from the main thread once its Python handlers for SIGINT
    and SIGTERM are in place: only a signal with one writes the byte)."""
    requested.clear()
    if not _watching:
        read, write = os.pipe()
        os.set_blocking(write, False)
        threading.Thread(target=_watch, args=(read,), name="signal-watch", daemon=True).start()
        _watching.append(write)
    signal.set_wakeup_fd(_watching[0], warn_on_full_buffer=False)


def _watch(fd: int) -> None:
    while data := os.read(fd, 64):
        if _STOPPING & set(data):
            requested.set()
            with _lock:
                connections = list(_open)
            for conn in connections:
                with contextlib.suppress(Exception):  # one already closed
                    conn.interrupt()
