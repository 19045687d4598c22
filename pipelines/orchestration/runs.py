"""A run the CLI plans (`PlannedRun`) and what it did once it ended (`RunOutcome`), read back
from the instance's event log whoever executed it: the CLI's process or a daemon's launcher."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from pipelines.orchestration.dagster_private import run_log
from pipelines.orchestration.partitions import RunRange

INTERRUPTED = "DagsterExecutionInterruptedError"


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
    failed_checks: list[str] = field(default_factory=list)
    """`asset:check (SEVERITY)` for every asset check of the run that did not pass."""
    warnings: list[str] = field(default_factory=list)
    """What the run's steps logged as warnings (the CLI shows them; the run's logs keep them)."""
    interrupted: bool = False

    def value(self, asset: str, key: str, default: Any = 0) -> Any:
        return self.metadata.get(asset, {}).get(key, default)

    @classmethod
    def not_run(cls, run: PlannedRun, error: str) -> RunOutcome:
        """A run that never ended in the instance: refused, canceled, or given up on."""
        return cls(run.label, False, run.partitions, error)


def run_outcome(run: PlannedRun, run_id: str, instance: dg.DagsterInstance) -> RunOutcome:
    """What a finished run did, from its event log: materializations, checks, warnings, error."""
    entries = run_log(instance, run_id)
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
