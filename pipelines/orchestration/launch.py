"""The CLI's loads as recorded Dagster runs: queued for the daemon when one serves the instance
(its run launcher places them: this host, Docker, Kubernetes), else executed here one after
another; either way each run's outcome is read back from the instance's event log."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.config import Settings
from pipelines.orchestration.abandoned import process_tags
from pipelines.orchestration.partitions import CES_API_POOL, RunRange

QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Runs executed for the CLI print nothing themselves: a failure's stack trace stays in the
run (the UI shows it), and the CLI reports each run's error and warnings in a line each."""
INTERRUPTED = "DagsterExecutionInterruptedError"
QUEUE_DAEMON = "QUEUED_RUN_COORDINATOR"
FOLLOW_SECONDS = 1.0
"""How often queued runs' states are read back while the CLI follows them."""
SUBMITTERS = 4
"""Runs put on the queue at once (each `dagster job launch` loads the code location: ~5 s)."""


class RunSubmissionError(RuntimeError):
    """`dagster job launch` refused a run: the queue holds nothing of it."""


class StoppedFollowing(KeyboardInterrupt):
    """Ctrl-C while following queued runs: they go on in the instance, whose UI follows them."""

    def __init__(self, run_ids: Sequence[str]):
        super().__init__(
            f"stopped following: {len(run_ids)} queued runs go on in the instance (the Dagster UI "
            f"shows them): {', '.join(run_ids)}"
        )


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
    instance.event_log_storage.set_concurrency_slots(CES_API_POOL, settings.orchestration.api_concurrency)
    return instance


def queue_is_served(instance: dg.DagsterInstance) -> bool:
    """Whether the instance queues runs and a live daemon takes them off its queue."""
    if not isinstance(instance.run_coordinator, dg.QueuedRunCoordinator):
        return False
    status = instance.get_daemon_statuses([QUEUE_DAEMON]).get(QUEUE_DAEMON)
    return bool(status and status.healthy)


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
    """Run `job_name` per planned run: queued when a daemon serves the instance, else here in
    order. A failure stops none, an interruption (Ctrl-C) stops following (queued runs go on)."""
    config = {**QUIET_LOGS, **(run_config or {})}
    if queue_is_served(instance):
        return _submit_and_follow(job_name, runs, instance, config, on_outcome)
    job = definitions.resolve_job_def(job_name)
    outcomes = []
    for run in runs:
        result = job.execute_in_process(
            instance=instance,
            tags={**run.tags, **process_tags()},
            run_config=config,
            raise_on_error=False,
        )
        outcome = run_outcome(run, result.run_id, instance)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
        if outcome.interrupted:
            raise KeyboardInterrupt
    return outcomes


def _submit_and_follow(
    job_name: str,
    runs: Sequence[PlannedRun],
    instance: dg.DagsterInstance,
    run_config: Mapping[str, Any],
    on_outcome: Callable[[RunOutcome], None] | None,
) -> list[RunOutcome]:
    """Queue every run with `dagster job launch` (a few at once: each loads the code location),
    then wait for each to end, in any order. A run the queue refused is a failed outcome."""
    outcomes: list[RunOutcome] = []

    def report(outcome: RunOutcome) -> None:
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    with ThreadPoolExecutor(max_workers=SUBMITTERS) as pool:
        submissions = [(run, pool.submit(submit_run, job_name, run, run_config)) for run in runs]
    pending: dict[str, PlannedRun] = {}
    for run, submission in submissions:
        if isinstance(refused := submission.exception(), RunSubmissionError):
            report(RunOutcome(run.label, False, run.partitions, str(refused)))
        else:
            pending[submission.result()] = run
    try:
        while pending:
            time.sleep(FOLLOW_SECONDS)
            for record in instance.get_run_records(dg.RunsFilter(run_ids=list(pending))):
                run_id = record.dagster_run.run_id
                if record.dagster_run.is_finished:
                    report(run_outcome(pending.pop(run_id), run_id, instance))
    except KeyboardInterrupt:
        raise StoppedFollowing(list(pending)) from None
    return outcomes


def submit_run(job_name: str, run: PlannedRun, run_config: Mapping[str, Any]) -> str:
    """Put one run on the instance's queue through Dagster's own CLI, with the code location of
    `$DAGSTER_HOME/workspace.yaml` (the daemon's) when there is one; its run ID."""
    run_id = str(uuid.uuid4())
    workspace = Path(os.environ["DAGSTER_HOME"]) / "workspace.yaml"
    location = ["-w", str(workspace)] if workspace.exists() else ["-m", "pipelines.definitions"]
    command = [sys.executable, "-m", "dagster", "job", "launch", "-j", job_name, *location]
    command += ["--tags", json.dumps(dict(run.tags)), "--config-json", json.dumps(run_config)]
    done = subprocess.run([*command, "--run-id", run_id], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise RunSubmissionError(f"dagster job launch refused {run.label}: {lines[-1] if lines else '?'}")
    return run_id


def run_outcome(run: PlannedRun, run_id: str, instance: dg.DagsterInstance) -> RunOutcome:
    """What a finished run did, from its event log: materializations, checks, warnings, error."""
    entries = instance.all_logs(run_id)
    events = [entry.dagster_event for entry in entries if entry.dagster_event is not None]
    failed = [
        f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name} ({evaluation.severity.value})"
        for event in events
        if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
        and not (evaluation := event.event_specific_data).passed  # type: ignore[union-attr]
    ]
    warnings = [
        entry.user_message
        for entry in entries
        if entry.level == logging.WARNING and entry.dagster_event is None
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
        warnings,
        interrupted=error is not None and INTERRUPTED in error,
    )


def _first_error(events: Sequence[dg.DagsterEvent], success: bool) -> str | None:
    for event in events:
        data = event.step_failure_data if event.is_step_failure else None
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
        if event.is_run_failure or event.event_type == dg.DagsterEventType.RUN_CANCELED
    ]
    return ends[-1] if ends and ends[-1] else "run failed"


def _metadata(events: Sequence[dg.DagsterEvent]) -> dict[str, dict[str, Any]]:
    """Each asset's materialization metadata (the same for every partition of a range run)."""
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.is_step_materialization:
            materialization = event.step_materialization_data.materialization
            found[materialization.asset_key.to_user_string()] = {
                key: getattr(value, "value", value) for key, value in materialization.metadata.items()
            }
    return found
