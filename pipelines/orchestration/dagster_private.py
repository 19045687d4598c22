"""The Dagster instance calls this project needs that are not Dagster's public API, in one place.

Each has no public equivalent in Dagster 1.13: the UI and the daemon use them the same way. An
upgrade that renames or reshapes one breaks here, and `tests/test_dagster_private.py` exercises
every one against a real instance, so the break shows as a failing test, not in production."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
from dagster._core.storage.event_log import SqlEventLogStorage, SqliteEventLogStorage
from dagster._core.storage.event_log.schema import AssetCheckExecutionsTable

QUEUE_DAEMON = "QUEUED_RUN_COORDINATOR"
"""The daemon type that takes runs off a QueuedRunCoordinator's queue."""


def open_instance(home: Path) -> dg.DagsterInstance:
    """The instance of `home`'s `dagster.yaml`, as `DagsterInstance.get()` opens `$DAGSTER_HOME`'s."""
    return dg.DagsterInstance.from_config(str(home))


def run_coordinator(instance: dg.DagsterInstance) -> object:
    """The instance's run coordinator: a `dg.QueuedRunCoordinator` when runs wait for a daemon."""
    return instance.run_coordinator


def cancel_queued_run(instance: dg.DagsterInstance, run_id: str) -> bool:
    """Cancel a run still waiting in the queue, as the UI's Terminate does; whether it was."""
    return instance.run_coordinator.cancel_run(run_id)


def queue_daemon_heartbeat(instance: dg.DagsterInstance) -> float | None:
    """When the queue's daemon last wrote its heartbeat (UNIX seconds); None if it never did.

    Only the time is read: Dagster's own health check tolerates 30 minutes of silence, far too
    long to tell a daemon that answers from one that stopped."""
    heartbeat = instance.get_daemon_heartbeats().get(QUEUE_DAEMON)
    return None if heartbeat is None else float(heartbeat.timestamp)


def set_pool_limit(instance: dg.DagsterInstance, pool: str, limit: int) -> None:
    """Set a concurrency pool's limit, as `dagster instance concurrency set POOL LIMIT` does."""
    instance.event_log_storage.set_concurrency_slots(pool, limit)


def free_pool_slots(instance: dg.DagsterInstance, run_id: str) -> None:
    """Give back every pool slot a run holds, as run monitoring does for a run that crashed."""
    instance.event_log_storage.free_concurrency_slots_for_run(run_id)


def record_run_failed(instance: dg.DagsterInstance, run: dg.DagsterRun, message: str) -> None:
    """Record a run as failed with a reason, as run monitoring does for a run whose worker died."""
    instance.report_run_failed(run, message=message)


def run_log(instance: dg.DagsterInstance, run_id: str) -> Sequence[dg.EventLogEntry]:
    """Every entry of a run's event log, in order: its events and the messages its steps logged."""
    return instance.all_logs(run_id)


def remove_run_leftovers(instance: dg.DagsterInstance, run_id: str) -> None:
    """What `delete_run` leaves of a deleted run: its asset check executions (~37 KB a run of the
    hourly schedule), its captured step output and, on SQLite, its event-log file, emptied but
    never shrunk (Dagster's `wipe` removes such files the same way)."""
    storage = instance.event_log_storage
    if isinstance(storage, SqlEventLogStorage):
        with storage.index_connection() as conn:
            conn.execute(
                AssetCheckExecutionsTable.delete().where(AssetCheckExecutionsTable.c.run_id == run_id)
            )
    instance.compute_log_manager.delete_logs(prefix=[run_id])
    if isinstance(storage, SqliteEventLogStorage):
        shard = storage.path_for_shard(run_id)
        for path in (shard, f"{shard}-wal", f"{shard}-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
