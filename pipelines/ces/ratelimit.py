"""Client-side pacing under the CES request quota, across threads and processes: requests are
spaced evenly (bursts would meet 429s) by GCRA: one timestamp, each caller sleeping outside the
lock until its slot."""

from __future__ import annotations

import fcntl
import os
import struct
import threading
import time
from collections.abc import Callable


class RateLimiter:
    """At most `max_rps` permits per second, one every `1 / max_rps` seconds (thread-safe)."""

    def __init__(
        self,
        max_rps: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if max_rps <= 0:
            raise ValueError(f"max_rps must be positive, got {max_rps}")
        self.max_rps = max_rps
        self._interval = 1.0 / max_rps
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._theoretical_arrival = float("-inf")

    def acquire(self) -> float:
        """Block until a permit is free; return the clock time the permit was granted for."""
        with self._lock:
            now = self._clock()
            granted_at = self._reserve(now)
        if granted_at > now:
            self._sleep(granted_at - now)
        return granted_at

    def _reserve(self, now: float) -> float:
        """The theoretical arrival of this permit, the next one's stored (under the lock)."""
        arrival = max(self._theoretical_arrival, now)
        self._theoretical_arrival = arrival + self._interval
        return arrival

    def __repr__(self) -> str:
        return f"RateLimiter(max_rps={self.max_rps})"


class FileRateLimiter(RateLimiter):
    """The same GCRA, its timestamp in a file under `flock`: every process using the file shares one rate."""

    _FORMAT = "<d"

    def __init__(self, path: str, max_rps: float):
        super().__init__(max_rps, clock=time.time)
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
    """This process's limiter for `max_rps` (a forked worker gets its own: a copied lock may be held)."""
    key = (os.getpid(), float(max_rps))
    with _shared_lock:
        limiter = _shared.get(key)
        if limiter is None:
            limiter = _shared[key] = RateLimiter(max_rps)
        return limiter


def rate_limiter_for(max_rps: float, state_file: str | None) -> RateLimiter | FileRateLimiter:
    """Shared by every process through `state_file` when one is configured, else by this process."""
    if state_file:
        return FileRateLimiter(state_file, max_rps)
    return shared_rate_limiter(max_rps)
