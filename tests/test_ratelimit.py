"""The process-wide request pacing."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import struct
import threading
import time

import pytest

from pipelines.ces.ratelimit import (
    FileRateLimiter,
    PostgresRateLimiter,
    RateLimiter,
    rate_limiter_for,
    shared_rate_limiter,
)
from scale.servers import create_database, psql


def acquire_from_threads(
    limiter: RateLimiter, threads: int, each: int
) -> tuple[list[float], list[float], float]:
    """(granted slot times, times the callers got through, wall time) for threads x each acquires."""
    granted: list[float] = []
    returned: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def work() -> None:
        start.wait()
        for _ in range(each):
            slot = limiter.acquire()
            now = time.monotonic()
            with lock:
                granted.append(slot)
                returned.append(now)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    began = time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sorted(granted), returned, time.monotonic() - began


def test_acquires_across_threads_never_exceed_the_rate() -> None:
    rps, total = 200.0, 60
    limiter = RateLimiter(rps)
    granted, returned, elapsed = acquire_from_threads(limiter, threads=6, each=total // 6)
    assert elapsed >= (total - 1) / rps * 0.98
    # in any window, one permit per interval
    interval = 1 / rps
    for i in range(len(granted)):
        for j in range(i + 1, len(granted)):
            assert granted[j] - granted[i] >= (j - i) * interval - 1e-9
    # nobody got through before its slot
    assert min(r - g for r, g in zip(sorted(returned), granted, strict=True)) >= -1e-3


def test_idle_time_banks_no_permits() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(10, clock=lambda: now[0], sleep=sleep)
    limiter.acquire()
    now[0] += 60  # a long idle minute
    grants = [limiter.acquire() for _ in range(3)]
    assert grants == [160.0, pytest.approx(160.1), pytest.approx(160.2)]
    assert slept == [pytest.approx(0.1), pytest.approx(0.1)]


def test_invalid_rates_are_refused() -> None:
    with pytest.raises(ValueError):
        RateLimiter(0)
    with pytest.raises(ValueError):
        RateLimiter(-5)


def test_one_shared_limiter_per_process_and_rate() -> None:
    assert shared_rate_limiter(7.5) is shared_rate_limiter(7.5)
    assert shared_rate_limiter(7.5) is not shared_rate_limiter(8)
    assert shared_rate_limiter(7.5).max_rps == 7.5


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_gets_its_own_limiter() -> None:
    parent = shared_rate_limiter(3)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports whether it got a fresh limiter
        os.write(write, b"1" if shared_rate_limiter(3) is not parent else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"


def _grant_times(kind: str, target: str, rps: float, count: int, queue) -> None:
    """In a process of its own: (when each permit was granted, when the caller got through)."""
    limiter = FileRateLimiter(target, rps) if kind == "file" else PostgresRateLimiter(target, rps)
    times = []
    for _ in range(count):
        times.append((limiter.acquire(), time.time()))
    limiter.close()
    queue.put(times)


def times_from_processes(kind: str, target: str, rps: float, processes: int = 3, each: int = 10) -> list:
    """Sorted (granted, got through) times of `processes` spawned processes sharing one limiter."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [
        context.Process(target=_grant_times, args=(kind, target, rps, each, queue)) for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    times = sorted(t for _ in workers for t in queue.get(timeout=60))
    for worker in workers:
        worker.join(10)
    assert len(times) == processes * each
    return times


def test_processes_sharing_a_postgres_budget_share_one_rate(postgres: str) -> None:
    """The budget of processes on any host: one row in PostgreSQL, on the server's clock."""
    conninfo = create_database(postgres, "budget_processes")
    through = sorted(got_through for _, got_through in times_from_processes("postgres", conninfo, 40.0))
    # A caller gets through a round trip after its permit was reserved, never before, and later
    # still when a busy machine schedules it late (a first permit's caller 37 ms late was seen
    # under the whole suite): any 20 permits in a row span about 19 intervals (475 ms), less that
    # lateness (100 ms allowed), where three processes not sharing one budget would pass 20 in
    # about 7 intervals (160 ms).
    spans = [through[i + 19] - through[i] for i in range(len(through) - 19)]
    assert min(spans) >= 19 / 40 - 0.1, "permits came faster than the rate allows"
    assert through[-1] - through[0] >= 29 / 40 - 0.1  # unshared: about 10 intervals (250 ms)


def test_a_postgres_budget_whose_connection_dropped_reconnects_once(postgres: str) -> None:
    """A connection the server ended (a failover, a restart, an idle timeout) is opened again for
    the next permit, within the same budget: an ingest does not fail on its rate limiter."""
    conninfo = create_database(postgres, "budget_reconnects")
    limiter = PostgresRateLimiter(conninfo, 50.0)
    try:
        limiter.acquire()
        others = (
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        (dropped,) = psql(conninfo, others).split()  # the limiter's connection
        psql(conninfo, f"SELECT pg_terminate_backend({dropped})")
        started = time.monotonic()
        limiter.acquire()
        assert time.monotonic() - started < 5.0
        assert psql(conninfo, others).split() not in ([], [dropped])  # connected again
        assert psql(conninfo, "SELECT count(*) FROM ces_rate_limit") == "1"  # the same budget row
    finally:
        limiter.close()


def test_a_postgres_budget_that_cannot_be_reached_is_one_clear_error_without_its_password() -> None:
    limiter = rate_limiter_for(5.0, None, "host=127.0.0.1 port=9 dbname=x user=ces password=s3cret-value")
    with pytest.raises(RuntimeError, match="CES_RATE_LIMIT_POSTGRES: cannot connect") as caught:
        limiter.acquire()
    assert "s3cret" not in str(caught.value) and "s3cret" not in repr(limiter)


def test_processes_sharing_a_state_file_share_one_rate(tmp_path) -> None:
    grants = [granted for granted, _ in times_from_processes("file", str(tmp_path / "rate.state"), 40.0)]
    gaps = [b - a for a, b in itertools.pairwise(grants)]
    assert min(gaps) >= 1 / 40 - 1e-6, "two permits were granted closer than the rate allows"
    assert grants[-1] - grants[0] >= 29 / 40 - 1e-6


def test_a_state_file_from_a_clock_step_is_ignored(tmp_path) -> None:
    path = tmp_path / "rate.state"
    path.write_bytes(struct.pack("<d", time.time() + 3600))
    started = time.monotonic()
    FileRateLimiter(str(path), 10.0).acquire()
    assert time.monotonic() - started < 0.5


def test_rate_limiter_for_picks_the_file_when_configured(tmp_path) -> None:
    assert isinstance(rate_limiter_for(5.0, str(tmp_path / "s")), FileRateLimiter)
    assert rate_limiter_for(5.0, None) is shared_rate_limiter(5.0)
