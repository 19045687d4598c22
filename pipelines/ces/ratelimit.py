"""Client-side pacing so every thread of a process stays under the CES request quota.

CES read quota is per project (typically 600 requests per minute), and ingestion is bound by
it, so requests are spaced evenly rather than sent in bursts that the server would answer
with 429s. The limiter is GCRA (the generic cell rate algorithm): one timestamp, no refill
thread, and each caller learns at once when its slot is, then sleeps outside the lock.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable


class RateLimiter:
    """At most `max_rps` permits per second on average, with bursts of at most `burst` permits.

    Thread-safe; permits are granted in the order callers reach the lock.
    """

    def __init__(
        self,
        max_rps: float,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if max_rps <= 0:
            raise ValueError(f"max_rps must be positive, got {max_rps}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst}")
        self.max_rps = max_rps
        self.burst = burst
        self._interval = 1.0 / max_rps
        self._tolerance = self._interval * (burst - 1)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._theoretical_arrival = float("-inf")

    def acquire(self) -> float:
        """Block until a permit is free; return the clock time the permit was granted for."""
        with self._lock:
            now = self._clock()
            arrival = max(self._theoretical_arrival, now)
            granted_at = max(now, arrival - self._tolerance)
            self._theoretical_arrival = arrival + self._interval
        wait = granted_at - now
        if wait > 0:
            self._sleep(wait)
        return granted_at

    def __repr__(self) -> str:
        return f"RateLimiter(max_rps={self.max_rps}, burst={self.burst})"


_shared: dict[tuple[int, float], RateLimiter] = {}
_shared_lock = threading.Lock()


def shared_rate_limiter(max_rps: float) -> RateLimiter:
    """The one limiter of this process for `max_rps`, shared by all clients and threads.

    Keyed by process id too, so a forked worker gets its own limiter instead of a copy whose
    lock another thread may have held at fork time.
    """
    key = (os.getpid(), float(max_rps))
    with _shared_lock:
        limiter = _shared.get(key)
        if limiter is None:
            limiter = _shared[key] = RateLimiter(max_rps)
        return limiter
