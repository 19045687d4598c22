"""Client-side pacing so every thread, and every process, stays under the CES request quota.

CES read quota is per project (typically 600 requests per minute), and ingestion is bound by
it, so requests are spaced evenly rather than sent in bursts that the server would answer
with 429s. The limiter is GCRA (the generic cell rate algorithm): one timestamp, no refill
thread, and each caller learns at once when its slot is, then sleeps outside the lock.
"""

from __future__ import annotations

import fcntl
import os
import struct
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
            arrival = self._reserve(now)
        granted_at = max(now, arrival - self._tolerance)
        wait = granted_at - now
        if wait > 0:
            self._sleep(wait)
        return granted_at

    def _reserve(self, now: float) -> float:
        """The theoretical arrival of this permit, the next one's stored (under the lock)."""
        arrival = max(self._theoretical_arrival, now)
        self._theoretical_arrival = arrival + self._interval
        return arrival

    def __repr__(self) -> str:
        return f"RateLimiter(max_rps={self.max_rps}, burst={self.burst})"


class FileRateLimiter(RateLimiter):
    """The same GCRA, with its one timestamp kept in a file under an exclusive `flock`.

    Every process that points at the same file shares one rate: parallel partitions of a
    backfill, the Dagster daemon's runs and a CLI ingest together stay under `max_rps`.
    Wall-clock time is stored, so the file stays meaningful across processes and reboots.
    """

    _FORMAT = "<d"

    def __init__(
        self, path: str, max_rps: float, *, burst: int = 1, sleep: Callable[[float], None] = time.sleep
    ):
        super().__init__(max_rps, burst=max(1, burst), clock=time.time, sleep=sleep)
        self.path = path

    def _reserve(self, now: float) -> float:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.pread(fd, struct.calcsize(self._FORMAT), 0)
            stored = struct.unpack(self._FORMAT, raw)[0] if len(raw) == struct.calcsize(self._FORMAT) else now
            # A timestamp far in the future can only come from a clock step: start afresh.
            arrival = now if stored > now + 60 else max(stored, now)
            os.pwrite(fd, struct.pack(self._FORMAT, arrival + self._interval), 0)
        finally:
            os.close(fd)  # closing releases the flock
        return arrival

    def __repr__(self) -> str:
        return f"FileRateLimiter(path={self.path!r}, max_rps={self.max_rps})"


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


def rate_limiter_for(max_rps: float, state_file: str | None) -> RateLimiter | FileRateLimiter:
    """The limiter a client should use: shared by every process through `state_file` when one
    is configured (`CES_RATE_LIMIT_FILE`, or inside `DAGSTER_HOME`), else by this process."""
    if state_file:
        return FileRateLimiter(state_file, max_rps)
    return shared_rate_limiter(max_rps)
