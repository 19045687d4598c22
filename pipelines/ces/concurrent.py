"""Calls run on threads for a consumer that takes their results in order, never far behind.

The API is I/O bound and rate limited from one place (`RateLimiter`), so threads are what
keeps requests back to back; the bound on how far they run ahead is what keeps memory flat.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def ordered_map(
    function: Callable[[T], R], items: Iterable[T], *, workers: int, thread_name_prefix: str
) -> Iterator[R]:
    """`function(item)` for each item, on `workers` threads, yielded in the order of `items`.

    At most `workers` calls are started before the consumer takes the oldest result, so at most
    that many results are held. An exception is raised where its result would have been; the
    calls not yet started are then cancelled (as they are when the consumer stops early).
    """
    workers = max(1, workers)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=thread_name_prefix) as pool:
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
