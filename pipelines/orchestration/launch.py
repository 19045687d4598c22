"""The CLI's loads: recorded Dagster runs, planned as backfills, run in turn here (threaded runs deadlock)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.orchestration.partitions import CES_API_POOL, RunRange

QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Runs executed for the CLI print nothing themselves: a failure's stack trace stays in the
run (the UI shows it), and the CLI reports each run's error and warnings in a line each."""
INTERRUPTED = "DagsterExecutionInterruptedError"


@dataclass
class RunOutcome:
    label: str
    success: bool
    partitions: int
    error: str | None = None
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed_checks: list[str] = field(default_factory=list)
    """`asset:check (SEVERITY)` for every asset check of the run that did not pass."""
    warnings: list[str] = field(default_factory=list)
    """What the run's steps logged as warnings (the CLI shows them; the run's logs keep them)."""
    interrupted: bool = False

    def value(self, asset: str, key: str, default: Any = 0) -> Any:
        return self.metadata.get(asset, {}).get(key, default)


def dagster_instance(api_concurrency: int) -> dg.DagsterInstance:
    """The instance in `DAGSTER_HOME` (`./dagster_home` when unset), its `ces_api` pool's limit set."""
    home = Path(os.environ.get("DAGSTER_HOME") or "dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)  # runs rebuilt from `pipelines.definitions` read it
    instance = dg.DagsterInstance.get()
    instance.event_log_storage.set_concurrency_slots(CES_API_POOL, api_concurrency)
    return instance


@dataclass(frozen=True)
class PlannedRun:
    label: str
    tags: Mapping[str, str]
    partitions: int

    @classmethod
    def for_range(cls, run: RunRange) -> PlannedRun:
        return cls(run.label, run.tags(), run.days)

    @classmethod
    def for_partition(cls, key: str) -> PlannedRun:
        return cls(key, {"dagster/partition": key}, 1)


def execute_runs(
    definitions: dg.Definitions,
    job_name: str,
    runs: Sequence[PlannedRun],
    *,
    instance: dg.DagsterInstance,
    run_config: Mapping[str, Any] | None = None,
    on_outcome: Callable[[RunOutcome], None] | None = None,
) -> list[RunOutcome]:
    """Run `job_name` per planned run, in order; a failure stops none, an interruption (Ctrl-C) all."""
    job = definitions.resolve_job_def(job_name)
    config = {**QUIET_LOGS, **(run_config or {})}
    outcomes = []
    for run in runs:
        result = job.execute_in_process(
            instance=instance, tags=dict(run.tags), run_config=config, raise_on_error=False
        )
        outcome = _outcome(run, result, instance)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
        if outcome.interrupted:
            raise KeyboardInterrupt
    return outcomes


def _outcome(run: PlannedRun, result: dg.ExecuteInProcessResult, instance: dg.DagsterInstance) -> RunOutcome:
    failed = [
        f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name} ({evaluation.severity.value})"
        for evaluation in result.get_asset_check_evaluations()
        if not evaluation.passed
    ]
    warnings = [
        entry.user_message
        for entry in instance.all_logs(result.run_id)
        if entry.level == logging.WARNING and entry.dagster_event is None
    ]
    error = _first_error(result)
    return RunOutcome(
        run.label,
        result.success,
        run.partitions,
        error,
        _metadata(result),
        failed,
        warnings,
        interrupted=error is not None and INTERRUPTED in error,
    )


def _first_error(result: dg.ExecuteInProcessResult) -> str | None:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data and event.step_failure_data.error:
            error = event.step_failure_data.error
            while error.cause is not None and "Error occurred while executing" in error.message:
                error = error.cause
            return f"{event.step_key}: {error.message.strip() or error.cls_name}"
    return None if result.success else "run failed"


def _metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    """Each asset's materialization metadata (the same for every partition of a range run)."""
    found: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.materialization
        found[materialization.asset_key.to_user_string()] = {
            key: getattr(value, "value", value) for key, value in materialization.metadata.items()
        }
    return found
