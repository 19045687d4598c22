"""Running the pipeline's jobs as the CLI does: runs over ranges, executed in the instance."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.config import Settings
from pipelines.definitions import build_definitions
from pipelines.orchestration.dagster_private import open_instance
from pipelines.orchestration.partitions import plan_runs, register_apps
from pipelines.orchestration.runs import PlannedRun, RunOutcome, execute_runs


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
    settings = Settings.from_env()
    return execute_runs(build_definitions(settings), job_name, runs, settings=settings, instance=instance)


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
    settings = Settings.from_env()
    definitions = build_definitions(settings)
    return execute_runs(
        definitions, job_name, runs, settings=settings, instance=instance, run_config=run_config
    )


@contextmanager
def instance_at(home: Path) -> Iterator[dg.DagsterInstance]:
    """The Dagster instance whose home is `home` (what a CLI run there used)."""
    with open_instance(home) as instance:
        yield instance
