"""How the CLI runs its runs: each a recorded Dagster run of the instance in the settings'
`DAGSTER_HOME`, executed here one after another, or, when `CES_QUEUE_RUNS` asks for it, queued for
the instance's daemon (`run_queue`), whose run launcher places them (this host, Docker,
Kubernetes). Either way what each run did (`RunOutcome`) is read back from its event log."""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines import stop
from pipelines.config import Settings
from pipelines.orchestration.abandoned import fail_abandoned_runs, process_tags
from pipelines.orchestration.dagster_private import open_instance, run_log, set_pool_limit
from pipelines.orchestration.partitions import CES_API_POOL, RunRange

QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Runs executed for the CLI print nothing themselves: a failure's stack trace stays in the
run (the UI shows it), and the CLI reports each run's error and warnings in a line each."""
INTERRUPTED = "DagsterExecutionInterruptedError"
DAGSTER_NOTICES = ("Data version mismatch for asset",)
"""Warnings Dagster logs about its own bookkeeping, not about the load, which the CLI does not repeat
(the run's logs keep them). A run of a range of partitions links its checks to the asset's newest
materialization, and says so when another run loaded another partition in between."""

Notice = Callable[[str], None]
"""Where a line for the person waiting goes (the CLI prints it above its progress display)."""


def dagster_home(settings: Settings) -> Path:
    """The instance's folder, `DAGSTER_HOME` (`./dagster_home` when unset), as an absolute path."""
    return Path(settings.orchestration.dagster_home).expanduser().resolve()


_INSTANCE_SETTINGS = Path(__file__).with_name("dagster.yaml")


def _write_instance_settings(home: Path) -> None:
    """Give a new instance folder the project's `dagster.yaml`: without one, Dagster warns on every
    command and runs with its own defaults (runs side by side, a log-tailing process per run,
    no run monitoring, telemetry). Written whole or not at all, so that a process opening the
    instance meanwhile never reads half of it."""
    home.mkdir(parents=True, exist_ok=True)
    partial = home / f".dagster.yaml.{os.getpid()}"
    shutil.copyfile(_INSTANCE_SETTINGS, partial)
    os.replace(partial, home / "dagster.yaml")


def dagster_instance(settings: Settings, notice: Notice = print) -> dg.DagsterInstance:
    """The instance in `DAGSTER_HOME` (given the project's `dagster.yaml` if it has none yet), the
    `ces_api` pool's limit set to `CES_API_CONCURRENCY`, and every run a killed `ces-pipeline`
    left unfinished recorded as failed (`notice` names each).

    The limit is set explicitly, never left to `concurrency.pools.default_limit`: on PostgreSQL,
    two steps initializing one pool's default at once fail (dagster-io/dagster#33552). Warehouse
    loads need no pool: a DuckDB file's writers queue on its lock, which a killed process frees
    (a pool slot of a run killed outside a daemon would stay taken), and a DuckLake's commit
    side by side."""
    home = dagster_home(settings)
    if not (home / "dagster.yaml").exists():
        _write_instance_settings(home)
        notice(f"wrote {home / 'dagster.yaml'}: ces-pipeline's Dagster instance settings (edit to change)")
    instance = open_instance(home)
    set_pool_limit(instance, CES_API_POOL, settings.orchestration.api_concurrency)
    for run_id in fail_abandoned_runs(instance):
        notice(
            f"run {run_id} was left unfinished by a ces-pipeline that was killed: recorded as failed, "
            "its pool slot freed"
        )
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


@dataclass
class RunOutcome:
    label: str
    success: bool
    partitions: int
    error: str | None = None
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each step's output metadata (or its `dg.Failure`'s), by step key (`raw__conversation_pages`)."""
    failed_checks: list[str] = field(default_factory=list)
    """`asset:check (SEVERITY)` for every asset check of the run that did not pass."""
    found_by_checks: dict[str, str] = field(default_factory=dict)
    """What each of those checks found, where it says (`asset:check` → its description)."""
    warnings: list[str] = field(default_factory=list)
    """What the run's steps logged as warnings (the CLI shows them; the run's logs keep them)."""
    interrupted: bool = False

    def value(self, step: str, key: str, default: Any = 0) -> Any:
        return self.metadata.get(step, {}).get(key, default)

    @classmethod
    def not_run(cls, run: PlannedRun, error: str) -> RunOutcome:
        """A run that never ended in the instance: refused, canceled, or given up on."""
        return cls(run.label, False, run.partitions, error)


def execute_runs(
    definitions: dg.Definitions,
    job_name: str,
    runs: Sequence[PlannedRun],
    *,
    settings: Settings,
    instance: dg.DagsterInstance,
    run_config: Mapping[str, Any] | None = None,
    on_outcome: Callable[[RunOutcome], None] | None = None,
    notice: Notice = print,
) -> list[RunOutcome]:
    """Run `job_name` per planned run: here in order, or (the settings' `CES_QUEUE_RUNS`) on the
    instance's queue for its daemon. A failure stops none; an interruption (Ctrl-C) starts no
    further run."""
    config = {**(run_config or {}), **QUIET_LOGS}  # a RunConfig's dict carries `loggers: {}`
    outcomes: list[RunOutcome] = []

    def report(outcome: RunOutcome) -> None:
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    if settings.orchestration.queue_runs:
        from pipelines.orchestration.run_queue import submit_and_follow

        submit_and_follow(job_name, runs, instance, dagster_home(settings), config, report, notice)
        return outcomes
    job = definitions.resolve_job_def(job_name)
    for run in runs:
        try:
            result = job.execute_in_process(
                instance=instance,
                tags={**run.tags, **process_tags()},
                run_config=config,
                raise_on_error=False,
            )
            outcome = run_outcome(run, result.run_id, instance)
        except KeyboardInterrupt:  # not inside the run's steps: before they began, or once they ended
            ended = "is recorded as failed" if fail_abandoned_runs(instance, this_process=True) else None
            raise _interrupted(ended) from None
        if stop.requested.is_set():  # a DuckDB query it interrupted ended with an error of its own
            outcome = dataclasses.replace(outcome, interrupted=True)
        report(outcome)
        if outcome.interrupted:
            raise _interrupted("finished first" if outcome.success else "is recorded as failed")
    return outcomes


def _interrupted(ended: str | None) -> KeyboardInterrupt:
    """The stop the CLI reports: how the run in progress `ended`, if one was in progress."""
    if ended is None:
        return KeyboardInterrupt("interrupted: no further run was started")
    return KeyboardInterrupt(f"interrupted: the run in progress {ended}; no other run was started")


def run_outcome(run: PlannedRun, run_id: str, instance: dg.DagsterInstance) -> RunOutcome:
    """What a finished run did, from its event log: materializations, checks, warnings, error."""
    entries = run_log(instance, run_id)
    events = [entry.dagster_event for entry in entries if entry.dagster_event is not None]
    not_passed = {
        f"{check.asset_key.to_user_string()}:{check.check_name}": check
        for event in events
        if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
        and not (check := event.asset_check_evaluation_data).passed
    }
    failed = [f"{name} ({check.severity.value})" for name, check in not_passed.items()]
    found = {name: check.description for name, check in not_passed.items() if check.description}
    warnings = [
        entry.user_message
        for entry in entries
        if entry.level == logging.WARNING
        and entry.dagster_event is None
        and not entry.user_message.startswith(DAGSTER_NOTICES)
    ]
    dagster_run = instance.get_run_by_id(run_id)
    success = dagster_run is not None and dagster_run.status == dg.DagsterRunStatus.SUCCESS
    error = _first_error(events, success)
    return RunOutcome(
        run.label,
        success,
        run.partitions,
        error,
        _metadata(events),
        failed,
        found,
        warnings,
        interrupted=error is not None and INTERRUPTED in error,
    )


def _first_error(events: Sequence[dg.DagsterEvent], success: bool) -> str | None:
    for event in events:
        data: Any = event.event_specific_data if event.is_step_failure else None
        if data is not None and data.error is not None:
            error = data.error
            while error.cause is not None and "Error occurred while executing" in error.message:
                error = error.cause
            message = error.message.strip()  # "module.Class: text": the text says it
            text = message.split(f"{error.cls_name}: ", 1)[-1].strip() if error.cls_name else message
            return f"{event.step_key}: {text or error.cls_name}"
    if success:
        return None
    ends = [
        event.message
        for event in events
        if event.event_type in (dg.DagsterEventType.RUN_FAILURE, dg.DagsterEventType.RUN_CANCELED)
    ]
    return ends[-1] if ends and ends[-1] else "run failed"


def _metadata(events: Sequence[dg.DagsterEvent]) -> dict[str, dict[str, Any]]:
    """Each step's output metadata (an asset's: the whole run's, where each partition's
    materialization holds its own), or that of the `dg.Failure` it raised."""
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        data: Any = event.event_specific_data
        if event.is_successful_output:
            metadata = data.metadata
        elif event.is_step_failure and data.user_failure_data is not None:
            metadata = data.user_failure_data.metadata
        else:
            continue
        found.setdefault(event.step_key, {}).update(
            {name: getattr(value, "value", value) for name, value in metadata.items()}
        )
    return found
