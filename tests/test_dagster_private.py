"""Every Dagster call of `orchestration/dagster_private.py` against a real SQLite instance: an
upgrade of Dagster that renames or reshapes one fails here first."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._daemon.types import DaemonHeartbeat

from pipelines.orchestration.dagster_private import (
    QUEUE_DAEMON,
    cancel_queued_run,
    free_pool_slots,
    open_instance,
    queue_daemon_heartbeat,
    record_run_failed,
    remove_run_leftovers,
    run_coordinator,
    run_log,
    set_pool_limit,
)

ROOT = Path(__file__).resolve().parent.parent


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


@dg.asset
def counted() -> int:
    return 1


@dg.asset_check(asset=counted)
def counted_is_positive() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


def test_what_a_deleted_run_leaves_is_removed(tmp_path: Path, instance: dg.DagsterInstance) -> None:
    job = dg.Definitions(
        assets=[counted], asset_checks=[counted_is_positive]
    ).resolve_implicit_global_asset_job_def()
    deleted, kept = (job.execute_in_process(instance=instance).run_id for _ in range(2))
    files = {
        run: [tmp_path / "history" / "runs" / f"{run}.db", tmp_path / "storage" / run]
        for run in [deleted, kept]
    }
    assert all(path.exists() for paths in files.values() for path in paths)
    check = counted_is_positive.check_key

    def checked_by() -> list[str]:
        return [
            record.run_id
            for record in instance.event_log_storage.get_asset_check_execution_history(check, 10)
        ]

    assert sorted(checked_by()) == sorted([deleted, kept])
    instance.delete_run(deleted)
    remove_run_leftovers(instance, deleted)
    assert not any(path.exists() for path in files[deleted])
    assert all(path.exists() for path in files[kept])
    assert checked_by() == [kept]
    assert run_log(instance, kept)


def test_an_instance_is_opened_from_its_folders_dagster_yaml(tmp_path: Path) -> None:
    (tmp_path / "dagster.yaml").write_text(
        "run_coordinator:\n  module: dagster.core.run_coordinator\n  class: DefaultRunCoordinator\n"
    )
    with open_instance(tmp_path) as instance:
        # Dagster's default coordinator queues: this one, as the file says, does not
        assert not isinstance(run_coordinator(instance), dg.QueuedRunCoordinator)
        assert hello.execute_in_process(instance=instance).success
    assert (tmp_path / "history" / "runs.db").exists()  # its storage is in the folder


def test_the_projects_instance_opens_without_dagster_home_and_cancels_a_queued_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", tmp_path)
    with open_instance(tmp_path) as instance:
        coordinator = run_coordinator(instance)
        assert isinstance(coordinator, dg.QueuedRunCoordinator)
        assert coordinator.dequeue_interval_seconds == 1  # a queued run starts within a second, not 5
        location = InProcessCodeLocationOrigin(LoadableTargetOrigin(python_file=__file__))
        origin = RemoteJobOrigin(RemoteRepositoryOrigin(location, "__repository__"), "hello")
        queued = dg.DagsterRun(job_name="hello", status=dg.DagsterRunStatus.QUEUED, remote_job_origin=origin)
        run = instance.add_run(queued)  # as `dagster job launch` leaves a run for the daemon
        assert cancel_queued_run(instance, run.run_id)
        stored = instance.get_run_by_id(run.run_id)
        assert stored is not None and stored.status == dg.DagsterRunStatus.CANCELED
    assert (tmp_path / "history" / "runs.db").exists()
