"""The CLI's loads as recorded Dagster runs: executed here one after another, or, when
`CES_QUEUE_RUNS` asks for it, queued for the instance's daemon (`run_queue`), whose run launcher
places them (this host, Docker, Kubernetes). Either way each run's outcome is read back from the
instance's event log."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines import stop
from pipelines.config import Settings
from pipelines.orchestration.abandoned import process_tags
from pipelines.orchestration.dagster_private import set_pool_limit
from pipelines.orchestration.partitions import CES_API_POOL
from pipelines.orchestration.run_queue import Notice, submit_and_follow
from pipelines.orchestration.runs import PlannedRun, RunOutcome, run_outcome

QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Runs executed for the CLI print nothing themselves: a failure's stack trace stays in the
run (the UI shows it), and the CLI reports each run's error and warnings in a line each."""

__all__ = ["QUIET_LOGS", "PlannedRun", "RunOutcome", "dagster_instance", "execute_runs"]


def dagster_instance(settings: Settings) -> dg.DagsterInstance:
    """The instance in `DAGSTER_HOME` (`./dagster_home` when unset), the `ces_api` pool's limit
    set to `CES_API_CONCURRENCY`.

    The limit is set explicitly, never left to `concurrency.pools.default_limit`: on PostgreSQL,
    two steps initializing one pool's default at once fail (dagster-io/dagster#33552). Warehouse
    loads need no pool: a DuckDB file's writers queue on its lock, which a killed process frees
    (a pool slot of a run killed outside a daemon would stay taken), and a DuckLake's commit
    side by side."""
    home = Path(os.environ.get("DAGSTER_HOME") or "dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)  # runs rebuilt from `pipelines.definitions` read it
    instance = dg.DagsterInstance.get()
    set_pool_limit(instance, CES_API_POOL, settings.orchestration.api_concurrency)
    return instance


def execute_runs(
    definitions: dg.Definitions,
    job_name: str,
    runs: Sequence[PlannedRun],
    *,
    instance: dg.DagsterInstance,
    run_config: Mapping[str, Any] | None = None,
    on_outcome: Callable[[RunOutcome], None] | None = None,
    queue: bool = False,
    notice: Notice = print,
) -> list[RunOutcome]:
    """Run `job_name` per planned run: here in order, or (`queue`) on the instance's queue for its
    daemon. A failure stops none; an interruption (Ctrl-C) starts no further run."""
    config = {**QUIET_LOGS, **(run_config or {})}
    outcomes: list[RunOutcome] = []

    def report(outcome: RunOutcome) -> None:
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    if queue:
        submit_and_follow(job_name, runs, instance, config, report, notice)
        return outcomes
    job = definitions.resolve_job_def(job_name)
    for run in runs:
        result = job.execute_in_process(
            instance=instance,
            tags={**run.tags, **process_tags()},
            run_config=config,
            raise_on_error=False,
        )
        outcome = run_outcome(run, result.run_id, instance)
        if stop.requested.is_set():  # a DuckDB query it interrupted ended with an error of its own
            outcome = dataclasses.replace(outcome, interrupted=True)
        report(outcome)
        if outcome.interrupted:
            raise KeyboardInterrupt
    return outcomes
