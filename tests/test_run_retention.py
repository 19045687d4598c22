"""Old runs whose work later runs redid are deleted; every partition's latest materialization stays."""

from __future__ import annotations

import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg

from pipelines.config import OrchestrationSettings, Settings
from pipelines.definitions import build_definitions
from pipelines.orchestration.retention import delete_redone_runs
from scale.servers import create_database, dagster_instance_at, libpq_url

ROOT = Path(__file__).resolve().parent.parent

DAYS = dg.StaticPartitionsDefinition(["2026-11-01", "2026-11-02"])


@dg.asset(partitions_def=DAYS)
def daily_rows() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"dagster/row_count": 3})


@dg.asset_check(asset=daily_rows)
def has_rows() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


@dg.asset
def broken() -> None:
    raise ValueError("no rows today")


def _runs(instance: dg.DagsterInstance) -> dict[str, str]:
    """The runs of the partitions and of the failure, by name, oldest first."""
    defs = dg.Definitions(
        assets=[daily_rows, broken],
        asset_checks=[has_rows],
        jobs=[
            dg.define_asset_job("daily", selection=[daily_rows]),
            dg.define_asset_job("failing", selection=[broken]),
        ],
    )
    daily, failing = defs.resolve_job_def("daily"), defs.resolve_job_def("failing")
    return {
        "first of day 1": daily.execute_in_process(partition_key="2026-11-01", instance=instance).run_id,
        "only of day 2": daily.execute_in_process(partition_key="2026-11-02", instance=instance).run_id,
        "failed": failing.execute_in_process(instance=instance, raise_on_error=False).run_id,
        "second of day 1": daily.execute_in_process(partition_key="2026-11-01", instance=instance).run_id,
    }


def _kept(instance: dg.DagsterInstance, runs: dict[str, str]) -> set[str]:
    return {name for name, run_id in runs.items() if instance.get_run_by_id(run_id) is not None}


def _checked_by(instance: dg.DagsterInstance, runs: dict[str, str]) -> set[str]:
    """The runs whose check executions the instance holds."""
    history = instance.event_log_storage.get_asset_check_execution_history(has_rows.check_key, limit=10)
    return {name for name, run_id in runs.items() if run_id in {record.run_id for record in history}}


def _assert_redone_runs_go(instance: dg.DagsterInstance) -> dict[str, str]:
    runs = _runs(instance)
    assert delete_redone_runs(instance, keep_days=30).deleted == 0  # none is old enough
    assert _kept(instance, runs) == set(runs)
    assert _checked_by(instance, runs) == {"first of day 1", "only of day 2", "second of day 1"}

    too_late = delete_redone_runs(instance, keep_days=30, now=datetime.now(UTC) + timedelta(days=38))
    assert (too_late.deleted, too_late.kept) == (0, 0)  # a week past the retention: not looked at

    result = delete_redone_runs(instance, keep_days=30, now=datetime.now(UTC) + timedelta(days=31))

    assert (result.deleted, result.kept) == (2, 2)
    assert _kept(instance, runs) == _checked_by(instance, runs) == {"only of day 2", "second of day 1"}
    key = daily_rows.key
    assert instance.get_materialized_partitions(key) == {"2026-11-01", "2026-11-02"}
    latest = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=["2026-11-01"]), limit=10
    ).records
    assert [record.run_id for record in latest] == [runs["second of day 1"]]
    assert latest[0].asset_materialization.metadata["dagster/row_count"].value == 3
    return runs


def test_runs_older_than_the_retention_go_once_later_runs_redid_their_work(tmp_path: Path) -> None:
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        runs = _assert_redone_runs_go(instance)
    for name, run_id in runs.items():  # the event-log file and the captured output of each
        files = [tmp_path / "history" / "runs" / f"{run_id}.db", tmp_path / "storage" / run_id]
        assert [path.exists() for path in files] == [name in {"only of day 2", "second of day 1"}] * 2, name


def test_the_same_on_an_instance_on_postgresql(tmp_path: Path, postgres: str) -> None:
    shutil.copy(ROOT / "scale" / "dagster.yaml", tmp_path / "dagster.yaml")
    url = libpq_url(create_database(postgres, f"dagster_{uuid.uuid4().hex[:8]}"), "postgresql+psycopg2")
    with dagster_instance_at({"DAGSTER_HOME": str(tmp_path), "DAGSTER_POSTGRES_URL": url}) as instance:
        _assert_redone_runs_go(instance)


def test_the_retention_job_keeps_the_configured_days_and_its_schedule_is_on(tmp_path: Path) -> None:
    defs = build_definitions(Settings(orchestration=OrchestrationSettings(run_retention_days=0)))
    schedule = defs.resolve_schedule_def("run_retention_daily")
    assert (schedule.job_name, schedule.default_status) == (
        "run_retention_job",
        dg.DefaultScheduleStatus.RUNNING,
    )
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        runs = _runs(instance)
        result = defs.resolve_job_def("run_retention_job").execute_in_process(instance=instance)
        assert result.success
        (output,) = [event for event in result.all_events if event.is_successful_output]
        metadata = output.event_specific_data.metadata
        assert (metadata["deleted_runs"].value, metadata["kept_runs"].value) == (2, 2)
        assert _kept(instance, runs) == {"only of day 2", "second of day 1"}
