"""Running the Dagster jobs from the CLI: partitions one by one or in parallel processes.

Runs go through the Dagster instance in `DAGSTER_HOME`, so every CLI ingest shows up in the
Dagster UI with its materializations, row counts and logs, exactly like a scheduled run.
Parallel partitions run in separate processes (flattening is CPU-bound); they share one CES
request rate through the rate-limit file and queue on the warehouse lock to write.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.orchestration.partitions import CES_API_POOL, partition_key, register_apps

DEFAULT_CES_API_CONCURRENCY = 4
QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass
class PartitionOutcome:
    """How one run ended: its partition, run id, success, the first error and its metadata."""

    app: str | None
    day: date
    run_id: str
    success: bool
    error: str | None = None
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed_checks: list[str] = field(default_factory=list)
    """`asset:check (SEVERITY)` for every asset check of the run that did not pass."""

    def value(self, asset: str, key: str, default: Any = 0) -> Any:
        return self.metadata.get(asset, {}).get(key, default)

    @property
    def label(self) -> str:
        return f"{self.app} {self.day}" if self.app else str(self.day)


def ensure_dagster_home() -> Path:
    """Point `DAGSTER_HOME` at `./dagster_home` when unset (Dagster needs an absolute path)."""
    home = Path(os.environ.get("DAGSTER_HOME") or "dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def instance_with_pools() -> dg.DagsterInstance:
    """The instance in `DAGSTER_HOME`, with the CES API pool limit applied and the pool slots
    of crashed runs given back (see `release_crashed_runs`)."""
    ensure_dagster_home()
    instance = dg.DagsterInstance.get()
    limit = int(os.environ.get("CES_API_CONCURRENCY") or DEFAULT_CES_API_CONCURRENCY)
    instance.event_log_storage.set_concurrency_slots(CES_API_POOL, limit)
    release_crashed_runs(instance)
    return instance


RUN_PROCESS_TAG = "ces-pipeline/process"
"""Tag naming the process that runs a job in-process: `host:pid:start time`."""


def _process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks after boot, from /proc), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{_process_start(os.getpid()) or '?'}"


def _process_gone(tag: str) -> bool:
    """True only when the tagged process certainly ended (same host, pid gone or reused)."""
    host, _, rest = tag.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit() or started == "?":
        return False
    return _process_start(int(pid)) != started


def release_crashed_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark failed the in-process runs whose process was killed, and free their pool slots.

    A run killed mid-step (SIGKILL, OOM, power cut) stays STARTED and keeps the pool slots it
    claimed; with the `warehouse_write` pool limited to 1, every later ingest would wait for
    that slot forever. Returns the run ids released.
    """
    released = []
    in_flight = [dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.CANCELING]
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=in_flight)):
        tag = run.tags.get(RUN_PROCESS_TAG)
        if tag and _process_gone(tag):
            instance.report_run_failed(run, "the process running it ended before the run finished")
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            released.append(run.run_id)
    return released


def execute_partition(
    definitions: dg.Definitions, job_name: str, app: str, day: date, instance: dg.DagsterInstance
) -> PartitionOutcome:
    """Run `job_name` for one (app, day) partition in this process."""
    job = definitions.resolve_job_def(job_name)
    result = job.execute_in_process(
        partition_key=partition_key(app, day),
        instance=instance,
        raise_on_error=False,
        run_config=QUIET_LOGS,
        tags={RUN_PROCESS_TAG: _this_process()},
    )
    return _outcome(app, day, result)


def _execute_in_worker(job_name: str, app: str, day: date) -> PartitionOutcome:
    """Worker-process entry point: definitions and instance are rebuilt from the environment."""
    from pipelines.definitions import build_definitions

    with dg.DagsterInstance.get() as instance:
        return execute_partition(build_definitions(), job_name, app, day, instance)


def run_partitions(
    definitions: dg.Definitions,
    job_name: str,
    partitions: Sequence[tuple[str, date]],
    *,
    instance: dg.DagsterInstance,
    parallel: int = 1,
    on_outcome: Callable[[PartitionOutcome], None] | None = None,
) -> list[PartitionOutcome]:
    """Run `job_name` once per (app, day); a failed partition never stops the others.

    With `parallel` > 1 the partitions run in that many worker processes, which need a
    persistent instance (`DAGSTER_HOME`), not an ephemeral one.
    """
    register_apps(instance, [app for app, _ in partitions])
    outcomes: list[PartitionOutcome] = []

    def done(outcome: PartitionOutcome) -> None:
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)

    if parallel <= 1 or len(partitions) <= 1:
        for app, day in partitions:
            done(execute_partition(definitions, job_name, app, day, instance))
    else:
        if instance.is_ephemeral:
            raise ValueError("parallel partitions need a persistent Dagster instance (set DAGSTER_HOME)")
        with ProcessPoolExecutor(max_workers=parallel, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(_execute_in_worker, job_name, app, day) for app, day in partitions]
            for future in as_completed(futures):
                done(future.result())
    return sorted(outcomes, key=lambda o: (o.day, o.app or ""))


def run_app_job(
    definitions: dg.Definitions,
    job_name: str,
    apps: Sequence[str],
    *,
    instance: dg.DagsterInstance,
    run_config: dict[str, Any] | None = None,
) -> list[PartitionOutcome]:
    """Run an app-partitioned job once per app, one after the other; the outcome's day is today."""
    register_apps(instance, apps)
    job = definitions.resolve_job_def(job_name)
    config = {**QUIET_LOGS, **(run_config or {})}
    today = datetime.now(UTC).date()
    outcomes = []
    for app in apps:
        result = job.execute_in_process(
            partition_key=app,
            instance=instance,
            raise_on_error=False,
            run_config=config,
            tags={RUN_PROCESS_TAG: _this_process()},
        )
        outcomes.append(_outcome(app, today, result))
    return outcomes


def _outcome(app: str, day: date, result: dg.ExecuteInProcessResult) -> PartitionOutcome:
    failed = [
        f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name} ({evaluation.severity.value})"
        for evaluation in result.get_asset_check_evaluations()
        if not evaluation.passed
    ]
    return PartitionOutcome(
        app, day, result.run_id, result.success, _first_error(result), _metadata(result), failed
    )


def _first_error(result: dg.ExecuteInProcessResult) -> str | None:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data and event.step_failure_data.error:
            error = event.step_failure_data.error
            while error.cause is not None and "Error occurred while executing" in error.message:
                error = error.cause
            return f"{event.step_key}: {error.message.strip()}"
    return None if result.success else "run failed"


def _metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.materialization
        found[materialization.asset_key.to_user_string()] = {
            key: getattr(value, "value", value) for key, value in materialization.metadata.items()
        }
    return found
