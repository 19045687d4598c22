"""Running the pipeline's jobs as the CLI does: runs over ranges, executed in the instance."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.config import Settings
from pipelines.definitions import build_definitions
from pipelines.orchestration.launch import PlannedRun, RunOutcome, execute_runs
from pipelines.orchestration.partitions import plan_runs, register_apps


def run_partitions(
    job_name: str,
    partitions: Sequence[tuple[str, date]],
    *,
    instance: dg.DagsterInstance,
    days_per_run: int = 31,
) -> list[RunOutcome]:
    """`job_name` over the partitions, one run per app's range of days, as `ces-pipeline` runs it."""
    runs = [PlannedRun.for_range(run) for run in plan_runs(partitions, days_per_run)]
    register_apps(instance, [app for app, _ in partitions])
    return execute_runs(_definitions(), job_name, runs, instance=instance)


def run_app_job(
    job_name: str,
    apps: Sequence[str],
    *,
    instance: dg.DagsterInstance,
    run_config: dict[str, Any] | None = None,
) -> list[RunOutcome]:
    """An app-partitioned job once per app."""
    runs = [PlannedRun.for_partition(app) for app in apps]
    register_apps(instance, apps)
    return execute_runs(_definitions(), job_name, runs, instance=instance, run_config=run_config)


def _definitions() -> dg.Definitions:
    """The definitions the environment describes now (tests point it at their own folders)."""
    return build_definitions(Settings.from_env())


@contextmanager
def instance_at(home: Path) -> Iterator[dg.DagsterInstance]:
    """The Dagster instance whose home is `home` (what a CLI run there used)."""
    previous = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.get() as instance:
            yield instance
    finally:
        if previous is None:
            del os.environ["DAGSTER_HOME"]
        else:
            os.environ["DAGSTER_HOME"] = previous
