"""Calls run on threads for a consumer that takes their results in order, never far behind.

The threads are daemons (`DaemonPool`): a request in flight may take minutes to end
(CES_REQUEST_DEADLINE_SECONDS), and Ctrl-C or SIGTERM must end the command within seconds. The
standard library's pools join their threads when the process exits, so a stop would wait for
every request in flight; no caller here waits for one on its way out."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class DaemonPool:
    """At most `workers` calls at once, each on a daemon thread of its own that waits for a free
    slot: a future not started yet can be canceled, and none holds the process at its exit."""

    def __init__(self, workers: int, name: str):
        self._slots = threading.BoundedSemaphore(max(1, workers))
        self._name = name

    def submit(self, function: Callable[..., R], *args: Any) -> Future[R]:
        future: Future[R] = Future()

        def run() -> None:
            with self._slots:
                if not future.set_running_or_notify_cancel():
                    return
                try:
                    future.set_result(function(*args))
                except BaseException as exc:  # the consumer gets it where the result would be
                    future.set_exception(exc)

        threading.Thread(target=run, name=self._name, daemon=True).start()
        return future


def ordered_map(
    function: Callable[[T], R], items: Iterable[T], *, workers: int, thread_name_prefix: str
) -> Iterator[R]:
    """`function(item)` on `workers` threads, in order, `workers` held at most; errors where results were."""
    workers = max(1, workers)
    pool = DaemonPool(workers, thread_name_prefix)
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) >= workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()


_END: Any = object()


def prefetched(items: Generator[T], *, on_drop: Callable[[T], None]) -> Iterator[T]:
    """`items`, each next one made on a thread meanwhile. However the caller stops (early, on an
    error, or on Ctrl-C or SIGTERM, whichever exception a signal handler raised), it never waits
    for the item in flight: that item goes to `on_drop` and `items` is closed once it arrives,
    on its daemon thread (`items` cannot be closed while it runs)."""
    pager = DaemonPool(1, "ces-pages")
    upcoming = pager.submit(next, items, _END)
    try:
        while (item := upcoming.result()) is not _END:
            upcoming = pager.submit(next, items, _END)
            yield item
    finally:

        def settle(last: Future[T]) -> None:
            if not last.cancelled() and last.exception() is None and (dropped := last.result()) is not _END:
                on_drop(dropped)
            items.close()

        upcoming.cancel()
        upcoming.add_done_callback(settle)
