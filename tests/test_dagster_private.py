"""Every Dagster call of `orchestration/dagster_private.py` against a real SQLite instance: an
upgrade of Dagster that renames or reshapes one fails here first."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._daemon.types import DaemonHeartbeat

from pipelines.orchestration.dagster_private import (
    QUEUE_DAEMON,
    free_pool_slots,
    queue_daemon_heartbeat,
    record_run_failed,
    run_log,
    set_pool_limit,
)


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        yield instance


@dg.op(pool="test_pool")
def says_hello(context) -> None:
    context.log.warning("hello")


@dg.job
def hello() -> None:
    says_hello()


def test_the_queue_daemons_heartbeat_is_read_as_written(instance: dg.DagsterInstance) -> None:
    assert queue_daemon_heartbeat(instance) is None
    written = time.time() - 42.5
    instance.add_daemon_heartbeat(DaemonHeartbeat(written, QUEUE_DAEMON, "d", errors=[]))
    instance.add_daemon_heartbeat(DaemonHeartbeat(time.time(), "SENSOR", "d", errors=[]))
    assert queue_daemon_heartbeat(instance) == pytest.approx(written)


def test_a_pool_limit_is_set_and_a_runs_slots_freed(instance: dg.DagsterInstance) -> None:
    set_pool_limit(instance, "test_pool", 3)
    assert instance.event_log_storage.get_concurrency_info("test_pool").slot_count == 3
    claim = instance.event_log_storage.claim_concurrency_slot("test_pool", "run-1", "step")
    assert claim.is_claimed
    assert instance.event_log_storage.get_concurrency_info("test_pool").active_slot_count == 1
    free_pool_slots(instance, "run-1")
    assert instance.event_log_storage.get_concurrency_info("test_pool").active_slot_count == 0


def test_a_run_is_recorded_failed_and_its_log_read_in_order(instance: dg.DagsterInstance) -> None:
    set_pool_limit(instance, "test_pool", 1)
    result = hello.execute_in_process(instance=instance)
    entries = run_log(instance, result.run_id)
    kinds = [entry.dagster_event_type for entry in entries if entry.dagster_event is not None]
    assert dg.DagsterEventType.RUN_START in kinds
    assert kinds[-1] == dg.DagsterEventType.RUN_SUCCESS
    assert [entry.user_message for entry in entries if entry.dagster_event is None] == ["hello"]

    run = instance.create_run_for_job(hello)
    record_run_failed(instance, run, "its process ended before the run")
    stored = instance.get_run_by_id(run.run_id)
    assert stored is not None and stored.status == dg.DagsterRunStatus.FAILURE
    failure = [entry for entry in run_log(instance, run.run_id) if entry.dagster_event_type]
    assert failure[-1].dagster_event.message == "its process ended before the run"
