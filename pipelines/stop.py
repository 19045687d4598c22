"""Stopping a command at once: a signal (Ctrl-C, SIGTERM) may reach a process whose main thread
is inside a DuckDB query, where no Python signal handler runs until the query returns (hours,
for a large one; Dagster's own handler only takes note). So the signal's wakeup byte is read by
a thread of its own, which interrupts every open DuckDB connection and records that a stop was
asked: the run in progress fails at once, and no further run starts (`runs.execute_runs`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Protocol, TypeVar

_STOPPING = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


class _Request:
    """Whether a stop was asked, as a `threading.Event` says it, but one that a signal handler may
    set: a second signal's handler can run inside the first's, on the same thread, and would wait
    for ever for the lock an Event's `set` holds there. `set` takes no lock: it records the stop
    and writes a stopping byte into the pipe the watching thread reads, which wakes the waiters."""

    def __init__(self) -> None:
        self._asked = False
        self._woken = threading.Event()

    def set(self) -> None:
        self._asked = True
        if _watching:
            with contextlib.suppress(BlockingIOError):  # a full pipe: the thread has bytes to read
                os.write(_watching[0], bytes([signal.SIGINT]))
        else:  # no thread reads the pipe, and no handler of ours runs
            self._woken.set()

    def _wake(self) -> None:
        """The watching thread's `set`, which no signal handler interrupts."""
        self._asked = True
        self._woken.set()

    def is_set(self) -> bool:
        return self._asked

    def wait(self, timeout: float | None = None) -> bool:
        return self._asked or self._woken.wait(timeout)

    def clear(self) -> None:
        self._asked = False
        self._woken.clear()


requested = _Request()
"""Set once Ctrl-C, SIGTERM or SIGHUP came (or a stop was found lost: `_lost_interrupt`)."""


class Interruptible(Protocol):
    def interrupt(self) -> None: ...

    def close(self) -> None: ...


_open: set[Interruptible] = set()
_lock = threading.Lock()

Connection = TypeVar("Connection", bound=Interruptible)


@contextlib.contextmanager
def interruptible(conn: Connection) -> Iterator[Connection]:
    """`conn` (a DuckDB connection) interrupted by a stop while it is open, and closed on the way
    out; interrupted first if an exception ends it: the exception may leave its query running on
    DuckDB's threads (Ctrl-C's KeyboardInterrupt, raised in DuckDB's own check for signals, ends
    the wait for the query, not the query), and `close` would wait for them to finish it."""
    with _lock:
        _open.add(conn)
    try:
        yield conn
    except BaseException:
        conn.interrupt()
        raise
    finally:
        with _lock:
            _open.discard(conn)
        conn.close()


_watching: list[int] = []
"""The write end of the wakeup pipe, once a thread reads it."""

STOP_GRACE_SECONDS = 30.0
"""How long a command has to end once a stop is asked (`ended_within`): longer than any stop's
own work (`dev` gives its servers 15 s to end)."""
_grace: list[float] = []
_deadline: list[threading.Timer] = []


@contextlib.contextmanager
def ended_within(seconds: float) -> Iterator[None]:
    """A stop asked while the block (a command) runs ends the process within `seconds`, whatever
    it is doing then. A call blocked in C code that checks for no signal, and that no interrupt
    reaches, would otherwise keep the command for ever, Ctrl-C after Ctrl-C: libpq waiting for a
    PostgreSQL catalog that took the connection and answers nothing, on the command's own thread
    (DuckDB runs an attach's task there). Past the grace the process ends where it is, with a line
    and exit 130, as a kill would end it: every load and write is made to survive that."""
    with _lock:
        _grace.append(seconds)
    try:
        yield
    finally:
        with _lock:  # one lock with `_arm_deadline`: no timer is armed for a block that ended
            _grace.remove(seconds)
            timers: list[threading.Timer] = []
            if not _grace:  # an outer block (a command around its run) keeps the deadline
                timers, _deadline[:] = list(_deadline), []
        for timer in timers:
            timer.cancel()


@contextlib.contextmanager
def run_ended_within(seconds: float) -> Iterator[None]:
    """`ended_within` for a Dagster run: Dagster ends a run it terminates (the UI's Terminate, run
    monitoring past `dagster/max_runtime`) with a SIGINT to the run's process, whose handler only
    runs once the main thread is back in Python. A step stuck where no interrupt reaches kept the
    process for ever, polling, after the run was recorded as ending; past the grace it ends
    there. Only on the main thread (a sensor's resources, on a server's thread, are left alone),
    where the signals' wakeup bytes are then watched as a command watches them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if not _watching:
        watch_signals()
    with ended_within(seconds):
        yield


def _arm_deadline() -> None:
    with _lock:
        if not _grace or _deadline:
            return
        timer = threading.Timer(_grace[-1], _end_now, args=(_grace[-1],))
        timer.daemon = True
        _deadline.append(timer)
    timer.start()


def _end_now(seconds: float) -> None:
    if _grace:  # the command did not end by itself
        line = f"interrupted: still busy {seconds:g} s after the stop, in a call no stop reaches (a server"
        os.write(2, f"{line} that answers nothing?): ended there\n".encode())
        os._exit(130)


def watch_signals() -> None:
    """A command starts: no stop asked yet, and the signals' wakeup bytes read on a thread of
    their own, one per process (call from the main thread once its Python handlers for SIGINT
    and SIGTERM are in place: only a signal with one writes the byte)."""
    requested.clear()
    sys.unraisablehook = _lost_interrupt
    if not _watching:
        read, write = os.pipe()
        os.set_blocking(write, False)
        threading.Thread(target=_watch, args=(read,), name="signal-watch", daemon=True).start()
        _watching.append(write)
    signal.set_wakeup_fd(_watching[0], warn_on_full_buffer=False)


def _lost_interrupt(unraisable: sys.UnraisableHookArgs) -> None:
    """An interruption (Ctrl-C's KeyboardInterrupt, Dagster's own) raised inside a callback whose
    exceptions Python ignores (a weak reference's, a `__del__`) is a stop, recorded here: Python's
    own hook would print it as a traceback after the command's one line. So is any error there once
    a stop was asked: a signal that lands as a `with` block is entered leaves its context manager
    unexited, and the garbage collector runs its cleanup later, on a connection closed since.
    Anything else is printed as Python would."""
    if unraisable.exc_type is not None and not issubclass(unraisable.exc_type, Exception):
        requested.set()
        return
    if not requested.is_set():
        sys.__unraisablehook__(unraisable)


def _watch(fd: int) -> None:
    while data := os.read(fd, 64):
        if _STOPPING & set(data):
            requested._wake()
            _arm_deadline()
            with _lock:
                connections = list(_open)
            for conn in connections:
                with contextlib.suppress(Exception):  # one already closed
                    conn.interrupt()


def pause(seconds: float) -> None:
    """`time.sleep` of a command's waiting loop, which a stop ends: it raises KeyboardInterrupt
    when a stop was asked, before or during the pause. The KeyboardInterrupt a signal raises lands
    wherever the main thread is when the handler runs: inside a callback whose exceptions Python
    ignores (a weak reference's), it is lost, and then only the stop it recorded is left."""
    if requested.wait(seconds):
        raise KeyboardInterrupt


def end_group(leader: subprocess.Popen, grace_seconds: float) -> None:
    """End the process group `leader` leads, everything it started with it: SIGTERM to the whole
    group, SIGKILL to what is left of it after the grace. SIGTERM, not SIGINT: a Python process
    still importing ends on it at once, where SIGINT would print a KeyboardInterrupt traceback."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(leader.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline and _group_alive(leader):
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(leader.pid, signal.SIGKILL)
    leader.wait()


def _group_alive(leader: subprocess.Popen) -> bool:
    leader.poll()  # the leader, once ended, is reaped: a zombie would count as alive
    try:
        os.killpg(leader.pid, 0)
    except ProcessLookupError:
        return False
    return True
