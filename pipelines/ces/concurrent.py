"""Calls run on threads for a consumer that takes their results in order, never far behind."""

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
    """`function(item)` on `workers` threads, in order, `workers` held at most; errors where results were."""
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
