"""Concurrent access to the warehouse file: writers queue, a held lock is a clear error."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.lock import WarehouseBusyError, warehouse_lock


def _hold_write_lock(path: str, seconds: float, ready) -> None:
    with warehouse_lock(path, exclusive=True, timeout_seconds=5):
        ready.set()
        time.sleep(seconds)


def _append_next(path: str) -> None:
    """Read-modify-write: without mutual exclusion two writers would insert the same number."""
    with Warehouse(path).connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t (v INTEGER)")
        current = conn.execute("SELECT count(*) FROM t").fetchone()[0]
        time.sleep(0.05)  # widen the window a racing writer would need
        conn.execute("INSERT INTO t VALUES (?)", [current])


def test_a_held_lock_times_out_with_a_clear_error(tmp_path: Path) -> None:
    path = str(tmp_path / "w.duckdb")
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_hold_write_lock, args=(path, 2.0, ready))
    holder.start()
    try:
        assert ready.wait(10)
        started = time.monotonic()
        with (
            pytest.raises(WarehouseBusyError, match="another ingest held it"),
            Warehouse(path, lock_timeout_seconds=0.3).connect(),
        ):
            pass
        assert 0.25 < time.monotonic() - started < 1.5
        with (
            pytest.raises(WarehouseBusyError, match="could not read"),
            Warehouse(path).connect(read_only=True, lock_timeout_seconds=0.1),
        ):
            pass
    finally:
        holder.join()


def test_concurrent_writers_wait_for_each_other(tmp_path: Path) -> None:
    path = str(tmp_path / "w.duckdb")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_next, args=(path,)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    with Warehouse(path).connect(read_only=True) as conn:
        assert sorted(v for (v,) in conn.execute("SELECT v FROM t").fetchall()) == [0, 1, 2, 3]


def test_readers_share_the_lock(tmp_path: Path) -> None:
    path = str(tmp_path / "w.duckdb")
    with Warehouse(path).connect() as conn:
        conn.execute("CREATE TABLE t (v INTEGER)")
    warehouse = Warehouse(path)
    with (
        warehouse_lock(path, exclusive=False, timeout_seconds=1),
        warehouse.connect(read_only=True, lock_timeout_seconds=0.2) as conn,
    ):
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
