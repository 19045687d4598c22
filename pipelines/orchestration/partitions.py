"""Partitions (app, UTC day), today included; apps are dynamic (`CES_APPS`): no code, no shared failure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import dagster as dg

APP_PARTITIONS = dg.DynamicPartitionsDefinition(name="ces_app")

CES_API_POOL = "ces_api"
"""Concurrency pool of every step that calls the CES API (limit set on the instance)."""

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"
"""The run tags naming the first and last partition of a run that covers a range."""
IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]
"""A run queued or running: a schedule or sensor waits for it rather than asking for its partitions again."""
MAX_RUNTIME = timedelta(days=1)
MAX_RUNTIME_TAG = "dagster/max_runtime"
"""Dagster's documented tag for a run's time limit (seconds), which run monitoring (on in the
project's `dagster.yaml`) enforces: a run still going after it is failed and terminated."""


def bounded(tags: dict[str, str] | None = None) -> dict[str, str]:
    """`tags` and a limit of `MAX_RUNTIME` on the time of a run a schedule or sensor requests. Such a
    run covers a few days of an app, or its evaluation runs: minutes, an hour for a very busy app at
    the API's quota. One that hangs (on a server that keeps the connection and answers nothing)
    would otherwise hold for ever the run slot (`max_concurrent_runs`: one by default, so every
    queued run waits behind it), its `ces_api` pool slots, and its app, which schedules and
    sensors skip while a run of it is in flight."""
    return {**(tags or {}), MAX_RUNTIME_TAG: str(int(MAX_RUNTIME.total_seconds()))}


def app_day_partitions(start_date: date) -> dg.MultiPartitionsDefinition:
    days = dg.DailyPartitionsDefinition(start_date=start_date.isoformat(), timezone="UTC", end_offset=1)
    return dg.MultiPartitionsDefinition({"date": days, "app": APP_PARTITIONS})


def partition_key(app: str, day: date) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"app": app, "date": day.isoformat()})


def partitions_of(context: dg.AssetExecutionContext) -> list[tuple[str, date]]:
    """The (app, day) partitions a step covers: one, or the range its run was given."""
    partitions_def = context.assets_def.partitions_def
    assert isinstance(partitions_def, dg.MultiPartitionsDefinition)
    found = []
    for key in context.partition_keys:  # a MultiPartitionKey is its string too
        parts = partitions_def.get_partition_key_from_str(key).keys_by_dimension
        found.append((parts["app"], date.fromisoformat(parts["date"])))
    return sorted(found)


@dataclass(frozen=True)
class RunRange:
    """One run's partitions: days `first` to `last` (both included) of one app."""

    app: str
    first: date
    last: date

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1

    def tags(self) -> dict[str, str]:
        return {
            RANGE_START_TAG: str(partition_key(self.app, self.first)),
            RANGE_END_TAG: str(partition_key(self.app, self.last)),
        }

    @property
    def label(self) -> str:
        days = str(self.first) if self.first == self.last else f"{self.first}…{self.last}"
        return f"{self.app} {days}"


def plan_runs(partitions: Iterable[tuple[str, date]], days_per_run: int) -> list[RunRange]:
    """The runs of these partitions: per app, consecutive days, `days_per_run` at most, as backfills."""
    by_app: dict[str, list[date]] = {}
    for app, day in partitions:
        by_app.setdefault(app, []).append(day)
    runs: list[RunRange] = []
    for app, days in by_app.items():
        for day in sorted(set(days)):
            run = runs[-1] if runs and runs[-1].app == app else None
            if run and day == run.last + timedelta(days=1) and (day - run.first).days < days_per_run:
                runs[-1] = RunRange(app, run.first, day)
            else:
                runs.append(RunRange(app, day, day))
    return sorted(runs, key=lambda run: (run.first, run.app))


def register_apps(instance: dg.DagsterInstance, apps: Sequence[str]) -> None:
    known = set(instance.get_dynamic_partitions(APP_PARTITIONS.name))
    new = [app for app in dict.fromkeys(apps) if app not in known]
    if new:
        instance.add_dynamic_partitions(APP_PARTITIONS.name, new)
