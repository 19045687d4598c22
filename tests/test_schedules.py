"""Which partitions the schedules ask for."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import dagster as dg
import pytest

from pipelines.config import Settings
from pipelines.definitions import build_definitions
from pipelines.orchestration.keys import WAREHOUSE_CONVERSATIONS
from pipelines.orchestration.partitions import (
    MAX_RUNTIME,
    RANGE_END_TAG,
    RANGE_START_TAG,
    RunRange,
    partition_key,
    register_apps,
)
from pipelines.orchestration.resources import CesResource
from pipelines.orchestration.schedules import configured_apps_sensor, days_to_refresh, refresh

APPS = ["projects/p/locations/us/apps/a", "projects/p/locations/us/apps/b", "projects/p/locations/us/apps/c"]
DEFINITIONS = build_definitions(Settings.from_env({"CES_APPS": ",".join(APPS)}))
conversations_hourly = DEFINITIONS.resolve_schedule_def("conversations_hourly")


def test_hourly_refreshes_today_and_the_lookback_days() -> None:
    now = datetime(2026, 11, 29, 0, 5, tzinfo=UTC)
    assert days_to_refresh(now, 2, date(2026, 1, 1)) == [
        date(2026, 11, 27),
        date(2026, 11, 28),
        date(2026, 11, 29),
    ]
    assert days_to_refresh(now, 0, date(2026, 1, 1)) == [date(2026, 11, 29)]


def test_the_day_is_the_utc_day_whatever_the_clock_zone() -> None:
    late_evening_in_new_york = datetime(2026, 11, 28, 21, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert days_to_refresh(late_evening_in_new_york, 0, date(2026, 1, 1)) == [date(2026, 11, 29)]


def test_no_day_before_the_first_partition() -> None:
    now = datetime(2026, 1, 1, 10, tzinfo=UTC)
    assert days_to_refresh(now, 2, date(2026, 1, 1)) == [date(2026, 1, 1)]


def _loaded(instance: dg.DagsterInstance, app: str, *days: date) -> None:
    """The conversation tables of these days of `app` materialized, as a load records them."""
    for day in days:
        materialization = dg.AssetMaterialization(
            WAREHOUSE_CONVERSATIONS, partition=str(partition_key(app, day))
        )
        instance.report_runless_asset_event(materialization)


def _tick(
    instance: dg.DagsterInstance,
    when: datetime,
    schedule: str = "conversations_hourly",
    definitions: dg.Definitions = DEFINITIONS,
) -> dg.ScheduleExecutionData:
    """A tick as the daemon evaluates it: the instance, the definitions' resources, set up and
    torn down around the tick (left open, they keep the instance as the thread's current one)."""
    with dg.build_schedule_context(
        instance=instance,
        repository_def=definitions.get_repository_def(),
        scheduled_execution_time=when,
        resources=definitions.resources,
    ) as context:
        return definitions.resolve_schedule_def(schedule).evaluate_tick(context)


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def test_the_hourly_schedule_requests_one_keyed_run_per_app_over_its_days(
    instance: dg.DagsterInstance,
) -> None:
    register_apps(instance, APPS)
    requests = _tick(instance, datetime(2026, 11, 29, 13, 5, tzinfo=UTC)).run_requests
    assert [(r.tags[RANGE_START_TAG], r.tags[RANGE_END_TAG]) for r in requests] == [
        (f"{app}|2026-11-27", f"{app}|2026-11-29") for app in APPS
    ]
    assert requests[0].run_key == f"{APPS[0]} 2026-11-27…2026-11-29@20261129T1305"
    # Ended by Dagster's run monitoring if still going after a day: a hung run would hold the
    # one run slot, and every queued run behind it, for ever.
    assert {r.tags["dagster/max_runtime"] for r in requests} == {"86400"}


def test_the_daily_schedule_requests_every_app(instance: dg.DagsterInstance) -> None:
    register_apps(instance, APPS)
    daily = _tick(instance, datetime(2026, 11, 29, 4, 30, tzinfo=UTC), "evaluation_runs_daily")
    assert [r.partition_key for r in daily.run_requests] == APPS
    assert {r.tags["dagster/max_runtime"] for r in daily.run_requests} == {"86400"}


def test_configured_apps_become_partitions(instance: dg.DagsterInstance) -> None:
    register_apps(instance, APPS[:1])
    ces = CesResource.from_settings(Settings.from_env({"CES_APPS": ",".join(APPS)}).ces)
    result = configured_apps_sensor(dg.build_sensor_context(instance=instance), ces=ces)
    (request,) = result.dynamic_partitions_requests
    assert request.partition_keys == APPS[1:]
    register_apps(instance, APPS)
    again = configured_apps_sensor(dg.build_sensor_context(instance=instance), ces=ces)
    assert again.skip_message == "every configured app is already a partition"
    unset = CesResource.from_settings(Settings.from_env({}).ces)
    none = configured_apps_sensor(dg.build_sensor_context(instance=instance), ces=unset)
    assert none.skip_message == "CES_APPS is not set: no app to add as a partition"


def _hourly_run(instance: dg.DagsterInstance, app: str, status: dg.DagsterRunStatus) -> None:
    """A run as the scheduler makes one of the hourly schedule's requests: its tags, its job."""
    job = DEFINITIONS.resolve_job_def(conversations_hourly.job_name)
    days = RunRange(app, date(2026, 11, 26), date(2026, 11, 28))
    tags = {**dg.DagsterRun.tags_for_schedule(conversations_hourly), **days.tags()}
    instance.create_run_for_job(job, status=status, tags=tags)


def test_an_app_whose_earlier_hourly_run_is_unfinished_is_skipped(instance: dg.DagsterInstance) -> None:
    """Ticks whose runs outlast the hour do not pile runs up: an app waits for its run of an
    earlier tick, not yet started (a queued run needs a code location: the same filter) or
    running; a finished or failed one holds nothing back."""
    register_apps(instance, APPS)
    _hourly_run(instance, APPS[0], dg.DagsterRunStatus.NOT_STARTED)
    _hourly_run(instance, APPS[1], dg.DagsterRunStatus.STARTED)
    _hourly_run(instance, APPS[2], dg.DagsterRunStatus.FAILURE)
    now = datetime.now(UTC)
    requested = _tick(instance, now).run_requests
    # the failed run's days again too (`refresh`), in a run of their own
    assert {r.tags[RANGE_START_TAG].split("|")[0] for r in requested} == {APPS[2]}

    _hourly_run(instance, APPS[2], dg.DagsterRunStatus.STARTING)
    skipped = _tick(instance, now)
    assert not skipped.run_requests
    assert skipped.skip_message == (
        "3 of 3 apps skipped: their run of an earlier tick is still queued or running "
        f"({APPS[0]}, {APPS[1]}, {APPS[2]})"
    )


def test_a_run_unfinished_for_a_day_holds_its_app_back_no_longer(instance: dg.DagsterInstance) -> None:
    """A run whose worker died with its machine stays STARTED under the default run launcher:
    after a day, the app's hourly loads go on without it."""
    register_apps(instance, APPS)
    _hourly_run(instance, APPS[0], dg.DagsterRunStatus.STARTED)
    a_day_later = datetime.now(UTC) + MAX_RUNTIME + timedelta(minutes=5)
    assert len(_tick(instance, a_day_later).run_requests) == len(APPS)


def test_the_schedules_cover_the_apps_of_ces_apps_alone(instance: dg.DagsterInstance) -> None:
    """An app taken out of CES_APPS (gone from CES, say) is fetched no more, though it stays a
    partition; one not yet registered waits for the sensor; no CES_APPS, no run."""
    gone = "projects/p/locations/us/apps/gone"
    register_apps(instance, [gone, *APPS[:2]])
    now = datetime.now(UTC)
    hourly = _tick(instance, now).run_requests
    assert [r.tags[RANGE_START_TAG].split("|")[0] for r in hourly] == APPS[:2]
    daily = _tick(instance, now, "evaluation_runs_daily").run_requests
    assert [r.partition_key for r in daily] == APPS[:2]
    for app in (gone, *APPS[:2]):  # the gone app's run counts for nothing
        _hourly_run(instance, app, dg.DagsterRunStatus.STARTED)
    assert _tick(instance, now).skip_message == (
        f"2 of 2 apps skipped: their run of an earlier tick is still queued or running ({APPS[0]}, {APPS[1]})"
    )

    unset = build_definitions(Settings.from_env({}))
    assert (
        _tick(instance, now, definitions=unset).skip_message
        == "CES_APPS is not set: there is no app to fetch"
    )
    with dg.instance_for_test() as empty:
        assert _tick(empty, now).skip_message == (
            "no app of CES_APPS is registered as a partition yet (configured_apps_sensor registers them)"
        )


def _failed(instance: dg.DagsterInstance, app: str, first: date, last: date, tmp_path: Path) -> None:
    """A run of the conversations job over these days of `app` that fails (CES unreachable), as a
    run stopped by Ctrl-C or an outage does: Dagster records their partitions FAILED."""
    settings = Settings.from_env(
        {
            "CES_APPS": app,
            "CES_MCP_URL": "http://127.0.0.1:9/mcp",
            "CES_LAKE": str(tmp_path / "lake"),
            "CES_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
            "CES_MAX_ATTEMPTS": "1",
        }
    )
    job = build_definitions(settings).resolve_job_def(conversations_hourly.job_name)
    run = job.execute_in_process(
        instance=instance, tags=RunRange(app, first, last).tags(), raise_on_error=False
    )
    assert not run.success


def test_the_hourly_schedule_catches_each_app_up_on_what_dagster_recorded(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    """Each app's usual days, and in runs of their own the days it is behind: those the hourly runs
    an outage missed would have refreshed (from the lookback before the day after its newest
    loaded day), and those whose latest load failed; a month back at most (told what is left and
    the command that loads it). An app never loaded: the usual days alone."""
    register_apps(instance, APPS)
    behind, long_gone, failing = APPS
    _loaded(instance, behind, date(2026, 11, 19), date(2026, 11, 20))
    _loaded(instance, long_gone, date(2026, 8, 31), date(2026, 9, 1))
    when = datetime(2026, 11, 29, 13, 5, tzinfo=UTC)
    usual = {(f"{app}|2026-11-27", f"{app}|2026-11-29") for app in APPS}

    def ranges(at: datetime = when) -> set[tuple[str, str]]:
        return {(r.tags[RANGE_START_TAG], r.tags[RANGE_END_TAG]) for r in _tick(instance, at).run_requests}

    assert ranges() == usual | {
        (f"{behind}|2026-11-19", f"{behind}|2026-11-26"),
        (f"{long_gone}|2026-10-30", f"{long_gone}|2026-11-26"),
    }
    due = refresh(instance, APPS, when, 2, date(2024, 1, 1))
    assert due.catching_up == [
        f"{behind}: catching up 8 days from 2026-11-19, its newest loaded day being 2026-11-20"
    ]
    assert due.left_behind == [
        f"{long_gone}: its newest loaded day, 2026-09-01, is older than the 31 days an hourly run "
        f"catches up; loading 2026-10-30 on. Load the days before with: ces-pipeline ingest --app "
        f"{long_gone} --since 2026-08-31 --until 2026-10-30"
    ]

    _loaded(instance, behind, *(date(2026, 11, 21) + timedelta(days=n) for n in range(9)))
    _loaded(instance, failing, date(2026, 11, 20), date(2026, 11, 28))
    _failed(instance, failing, date(2026, 11, 20), date(2026, 11, 21), tmp_path)
    assert ranges(when + timedelta(hours=1)) == usual | {
        (f"{long_gone}|2026-10-30", f"{long_gone}|2026-11-26"),
        (f"{failing}|2026-11-20", f"{failing}|2026-11-21"),
    }
    again = refresh(instance, APPS, when, 2, date(2024, 1, 1))
    assert again.catching_up == [
        f"{failing}: catching up 2 days from 2026-11-20, its newest loaded day being 2026-11-28, "
        "2 whose latest load failed"
    ]
    assert again.caught_up() == again.catching_up[0]
    # said in one line however many apps an outage left behind
    many = dataclasses.replace(again, catching_up=[*again.catching_up, "b: …", "c: …"])
    assert many.caught_up() == f"{again.catching_up[0]}; 2 more apps caught up too"
