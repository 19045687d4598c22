"""Start an evaluation run (sent once), poll its operation until it names the run, and follow the
run to its end; errors name the operation, for a person to follow.

The operation of `run_evaluation` may last as long as the run itself, so starting waits only until
the run is named (its metadata usually names it at once), never for the operation to end: a start
holds no API slot for the hours a large evaluation takes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pipelines import stop
from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesError, CesRpcError, CesToolError
from pipelines.ces.tools import get_evaluation_run, get_operation, run_evaluation
from pipelines.errors import ActionableError
from pipelines.ingest.evaluations import FINAL_RUN_STATES, STARTED_RUNS_STATE, run_state
from pipelines.lake.store import Lake
from pipelines.resource_names import name_of


class EvaluationTriggerError(ActionableError, RuntimeError):
    """Starting or following an evaluation failed; `operation` is set once the server named one."""

    def __init__(self, message: str, operation: str | None = None):
        super().__init__(message if operation is None else f"{message} (operation {operation})")
        self.operation = operation


@dataclass
class StartedEvaluation:
    operation: str
    evaluation_run: str
    polls: int


def evaluation_run_of(operation: dict[str, Any]) -> str | None:
    """The evaluation run an operation created: from its response, else its metadata."""
    for part in ("response", "metadata"):
        body = operation.get(part)
        if isinstance(body, dict) and isinstance(body.get("evaluationRun"), str):
            return body["evaluationRun"]
    return None


def start_evaluation(
    client: CesMcpClient,
    lake: Lake,
    app: str,
    *,
    evaluations: Sequence[str] | None = None,
    evaluation_dataset: str | None = None,
    display_name: str | None = None,
    app_version: str | None = None,
    poll_seconds: float = 2.0,
    timeout_seconds: float = 600.0,
    on_operation: Callable[[str], None] | None = None,
) -> StartedEvaluation:
    """Start a run, poll its operation until it names the run, and record the run as started here."""
    if bool(evaluations) == bool(evaluation_dataset):
        raise ValueError("give either evaluations or an evaluation dataset, not both and not neither")
    try:
        operation = run_evaluation(
            client,
            app,
            evaluations=evaluations,
            evaluation_dataset=evaluation_dataset,
            display_name=display_name,
            app_version=app_version,
        )
    except (CesToolError, CesRpcError) as exc:
        raise EvaluationTriggerError(f"the server refused to start the evaluation: {exc}") from exc
    except CesError as exc:
        raise EvaluationTriggerError(
            f"run_evaluation did not answer ({exc}); it may or may not have started a run: check the "
            "app's evaluation runs before trying again"
        ) from exc
    name = name_of(operation)
    if not name:
        raise EvaluationTriggerError(f"run_evaluation returned no operation name: {str(operation)[:200]}")
    if on_operation:
        on_operation(name)
    lake.write_state(STARTED_RUNS_STATE, name, _started(app, name, evaluation_run_of(operation)))
    deadline = time.monotonic() + timeout_seconds
    polls = 0
    while evaluation_run_of(operation) is None and not operation.get("done"):
        if time.monotonic() > deadline:
            raise EvaluationTriggerError(f"operation named no run after {timeout_seconds:.0f} s", name)
        stop.pause(poll_seconds)
        try:
            operation = get_operation(client, name)
        except CesError as exc:
            raise EvaluationTriggerError(f"get_operation failed: {exc}", name) from exc
        polls += 1
    run = evaluation_run_of(operation)
    error = operation.get("error")
    if run is None and isinstance(error, dict):
        raise EvaluationTriggerError(f"evaluation failed: {error.get('message') or error}", name)
    if run is None:
        raise EvaluationTriggerError("the finished operation names no evaluation run", name)
    lake.write_state(STARTED_RUNS_STATE, name, _started(app, name, run))
    return StartedEvaluation(name, run, polls)


def wait_for_evaluation_run(
    client: CesMcpClient,
    name: str,
    *,
    poll_seconds: float = 2.0,
    timeout_seconds: float = 6 * 3600.0,
    on_run: Callable[[dict[str, Any]], None] | None = None,
) -> str:
    """Poll `get_evaluation_run` until the run is COMPLETED, ERROR or CANCELLED; that state."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            run = get_evaluation_run(client, name)
        except CesError as exc:
            raise EvaluationTriggerError(f"get_evaluation_run failed: {exc}") from exc
        if on_run:
            on_run(run)
        state = run_state(run)
        if state in FINAL_RUN_STATES:
            return state
        if time.monotonic() > deadline:
            raise EvaluationTriggerError(f"evaluation run {name} not finished after {timeout_seconds:.0f} s")
        stop.pause(poll_seconds)


def _started(app: str, operation: str, run: str | None) -> dict[str, Any]:
    return {
        "app": app,
        "operation": operation,
        "evaluation_run": run,
        "recorded_at": datetime.now(UTC).isoformat(),
    }
