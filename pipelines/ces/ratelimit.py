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
from typing import Any

from pipelines.config import LIBPQ_KEEPALIVES, keepalives_set
from pipelines.sqlfiles import sql_text


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
            granted_at = self._reserve(self._clock())
        wait = granted_at - self._clock()  # a reservation that took a round trip waits that much less
        if wait > 0:
            self._sleep(wait)
        return granted_at

    def _reserve(self, now: float) -> float:
        """The theoretical arrival of this permit, the next one's stored (under the lock)."""
        arrival = max(self._theoretical_arrival, now)
        self._theoretical_arrival = arrival + self._interval
        return arrival

    def close(self) -> None:
        """Release what the limiter holds (a database connection); it may be used again after."""

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


class PostgresRateLimiter(RateLimiter):
    """The same GCRA, its arrival time a row in PostgreSQL kept on the server's clock: every
    process on every host using the database shares one rate (`CES_RATE_LIMIT_POSTGRES`)."""

    BUDGET = "ces"

    def __init__(self, conninfo: str, max_rps: float):
        super().__init__(max_rps, clock=time.time)
        self._conninfo = conninfo
        self._connection: Any = None

    def _reserve(self, now: float) -> float:
        try:
            wait = self._wait_for_permit()
        except Exception:
            if self._connection is None:  # it could not connect: nothing to retry
                raise
            self.close()  # a dropped connection: one new one, then the error is the caller's
            wait = self._wait_for_permit()
        # The wait was measured on the server before its answer travelled back: counted from the
        # answer's arrival, a permit is never early by the round trip.
        return self._clock() + max(wait, 0.0)

    def _wait_for_permit(self) -> float:
        if self._connection is None:
            self._connection = _connect_postgres(self._conninfo)
        with self._connection.cursor() as cursor:
            cursor.execute(
                sql_text("ratelimit/reserve_permit.sql"), {"name": self.BUDGET, "interval": self._interval}
            )
            return float(cursor.fetchone()[0])

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __repr__(self) -> str:  # the connection string may hold a password: never shown
        return f"PostgresRateLimiter(max_rps={self.max_rps})"


def _connect_postgres(conninfo: str) -> Any:
    """An autocommit connection with the budget table in place."""
    try:
        import psycopg2
    except ImportError as exc:
        raise RuntimeError("CES_RATE_LIMIT_POSTGRES needs psycopg2: pip install -e '.[scale]'") from exc
    try:
        bounds = {} if keepalives_set(conninfo) else LIBPQ_KEEPALIVES
        connection = psycopg2.connect(conninfo, connect_timeout=10, application_name="ces-pipeline", **bounds)
    except psycopg2.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RuntimeError(f"CES_RATE_LIMIT_POSTGRES: cannot connect: {first}") from None
    connection.autocommit = True
    for attempt in range(3):  # two processes creating the table at once: one loses, then finds it
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql_text("ratelimit/create_budget.sql"))
            break
        except psycopg2.IntegrityError:
            if attempt == 2:
                raise
    return connection


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


def rate_limiter_for(max_rps: float, state_file: str | None, postgres: str | None = None) -> RateLimiter:
    """Shared by every host through `postgres`, by this host's processes through `state_file`,
    whichever is configured first, else by this process."""
    if postgres:
        return PostgresRateLimiter(postgres, max_rps)
    if state_file:
        return FileRateLimiter(state_file, max_rps)
    return shared_rate_limiter(max_rps)
