"""CES `EvaluationRun` JSON (and the operations that started runs) → the evaluation run tables, as
field maps: each column's path in the run and its reader."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from pipelines import resource_names
from pipelines.transform import values as v
from pipelines.transform.columns import TableColumns
from pipelines.transform.fields import (
    Column,
    FieldFlattener,
    Rows,
    at,
    boolean,
    const,
    duration,
    enum,
    given,
    int32,
    json,
    text,
    timestamp,
)
from pipelines.transform.schemas import (
    EVALUATION_RUN_ERRORS,
    EVALUATION_RUN_EVALUATIONS,
    EVALUATION_RUN_LATENCIES,
    EVALUATION_RUN_OPERATIONS,
    EVALUATION_RUN_PERSONAS,
    EVALUATION_RUN_RESULTS,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_SUMMARIES,
    EVALUATION_RUN_TABLES,
    EVALUATION_RUNS,
    OPERATION_REJECT_SOURCE,
    RUN_REJECT_SOURCE,
)


def run_name(run: dict[str, Any]) -> tuple[str, str, str]:
    """(name, app, run id) of an EvaluationRun, or a SchemaViolation."""
    name = v.text(run.get("name"), "name")
    match = resource_names.EVALUATION_RUN.fullmatch(name or "")
    if match is None:
        raise v.SchemaViolation(f"name: not an evaluation run resource name: {str(name)[:120]!r}")
    return name, match.group(1), match.group(2)


def _run_names(run: dict[str, Any], where: str) -> dict[str, Any]:
    name, app, run_id = run_name(run)
    return {"evaluation_run_name": name, "app": app, "evaluation_run_id": run_id}


ERROR_TYPE = enum("errorInfo.errorType", "EvaluationErrorInfo.ErrorType")
_ERROR_INFO = at("errorInfo", v.message)
_INFO_MESSAGE, _STATUS_MESSAGE = text("errorInfo.errorMessage"), text("error.message")


def error_message(obj: Any, where: str) -> str | None:
    """A run's or result's error message: its `errorInfo`'s if it has one, else its Status's."""
    return (_INFO_MESSAGE if _ERROR_INFO(obj, where) else _STATUS_MESSAGE)(obj, where)


def error_details(prefix: str) -> dict[str, Column]:
    """The columns every error row shares: `errorInfo`'s session and user-facing message, and the
    Status's code, message and details (JSON); `prefix` starts the names of all but one."""
    return {
        f"{prefix}session_id": text("errorInfo.sessionId"),
        "user_facing_error_message": text("errorInfo.userFacingErrorMessage"),
        f"{prefix}status_code": given("error", bool, int32("error.code")),
        f"{prefix}status_message": _STATUS_MESSAGE,
        f"{prefix}status_details": json("error.details", v.array),
    }


def tool_subject(entry: Any, where: str) -> str | None:
    """The tool's name, or `{toolset}/{toolId}` (or the toolset alone), as `tool_label` in the views."""
    entry = v.message(entry, where[:-1])
    tool = v.text(entry.get("tool"), f"{where}tool")
    if tool:
        return tool
    toolset_tool = v.message(entry.get("toolsetTool"), f"{where}toolsetTool")
    toolset = v.text(toolset_tool.get("toolset"), f"{where}toolsetTool.toolset")
    tool_id = v.text(toolset_tool.get("toolId"), f"{where}toolsetTool.toolId")
    if toolset is None:
        return None
    return f"{toolset}/{tool_id}" if tool_id else toolset


STATE = enum("state", "EvaluationRun.EvaluationRunState")
PROGRESS = {
    f"{count}_count": int32(f"progress.{count}Count")
    for count in ("total", "passed", "failed", "error", "completed", "cancelled")
}
RUN = {
    "display_name": text("displayName"),
    "create_time": timestamp("createTime"),
    "initiated_by": text("initiatedBy"),
    "app_version": text("appVersion"),
    "app_version_display_name": text("appVersionDisplayName"),
    "changelog": text("changelog"),
    "changelog_create_time": timestamp("changelogCreateTime"),
    "evaluation_dataset": text("evaluationDataset"),
    "evaluation_type": enum("evaluationType", "EvaluationRun.EvaluationType"),
    "state": STATE,
    **PROGRESS,
    "run_count": int32("runCount"),
    "golden_run_method": enum("goldenRunMethod", "GoldenRunMethod"),
    "evaluation_channel": enum("config.evaluationChannel", "EvaluationConfig.EvaluationChannel"),
    "tool_call_behaviour": enum("config.toolCallBehaviour", "EvaluationToolCallBehaviour"),
    "error_type": ERROR_TYPE,
    "error_message": error_message,
    "latency_session_count": int32("latencyReport.sessionCount"),
    "scheduled_evaluation_run": text("scheduledEvaluationRun"),
    "operation": text("operation"),
    "optimization_status": enum("optimizationConfig.status", "OptimizationConfig.OptimizationStatus"),
}


def _latencies(field: str, kind: str, subject: Column, display: Column) -> Rows:
    """The entries of one list of the run's latency report, numbered within it."""
    metrics = {f"p{p}_seconds": duration(f"latencyMetrics.p{p}Latency") for p in (50, 90, 99)} | {
        "call_count": int32("latencyMetrics.callCount")
    }
    fields = {"kind": const(kind), "subject": subject, "display_name": display, **metrics}
    return Rows(EVALUATION_RUN_LATENCIES, fields, f"latencyReport.{field}", "list", "entry_index")


def _listed(table: Any, field: str, column: str, index: str) -> Rows:
    """A list of resource names of the run, a row each."""
    return Rows(table, {column: text("")}, field, "list", index)


RUN_ROWS = Rows(
    EVALUATION_RUNS,
    RUN,
    derive=_run_names,
    children=(
        Rows(
            EVALUATION_RUN_SUMMARIES,
            {f"{count}_count": int32(f"{count}Count") for count in ("passed", "failed", "error")},
            "evaluationRunSummaries",
            "map",
            "evaluation_name",
        ),
        _latencies("toolLatencies", "tool", tool_subject, text("toolDisplayName")),
        _latencies("callbackLatencies", "callback", text("stage"), const(None)),
        _latencies("guardrailLatencies", "guardrail", text("guardrail"), text("guardrailDisplayName")),
        _latencies("llmCallLatencies", "llm_call", text("model"), const(None)),
        Rows(
            EVALUATION_RUN_PERSONAS,
            {"persona": text("persona"), "task_count": int32("taskCount")},
            "personaRunConfigs",
            "list",
            "persona_index",
        ),
        _listed(EVALUATION_RUN_EVALUATIONS, "evaluations", "evaluation_name", "evaluation_index"),
        _listed(EVALUATION_RUN_RESULTS, "evaluationResults", "evaluation_result_name", "result_index"),
        Rows(
            EVALUATION_RUN_ERRORS,
            {"error_type": ERROR_TYPE, "error_message": _INFO_MESSAGE, **error_details("")},
            when=lambda run: bool(run.get("errorInfo") or run.get("error")),
        ),
    ),
)


class EvaluationRunFlattener(FieldFlattener):
    """`add(run, observed_at)`: a run fetched then (epoch microseconds)."""

    def __init__(self) -> None:
        given = ("observed_at",)
        super().__init__(EVALUATION_RUN_TABLES, RUN_ROWS, RUN_REJECT_SOURCE, "evaluationRun", given)


def snapshot_row(run: dict[str, Any], observed_at_micros: int) -> tuple[Any, ...]:
    """The `evaluation_run_snapshots` row of a run (flattened without a reject) seen then."""
    context = {"evaluation_run_name": run_name(run)[0], "observed_at": observed_at_micros}
    return tuple(
        context[column] if column in context else RUN[column](run, "")
        for column in EVALUATION_RUN_SNAPSHOTS.schema.names
    )


def snapshots_batch(rows: Iterable[tuple[Any, ...]]) -> pa.RecordBatch:
    table = TableColumns(EVALUATION_RUN_SNAPSHOTS)
    for row in rows:
        table.append(row)
    return table.to_batch()


_METADATA_RUN, _RESPONSE = text("metadata.evaluationRun"), at("response", v.message)


def _operation_run(operation: dict[str, Any], where: str) -> dict[str, Any]:
    """The run an operation started, named by its metadata or its response."""
    response = _RESPONSE(operation, where)
    run = _METADATA_RUN(operation, where) or v.text(response.get("evaluationRun"), "response.evaluationRun")
    if run is None:
        raise v.SchemaViolation("metadata.evaluationRun: the operation names no evaluation run")
    name, app, _ = run_name({"name": run})
    return {"evaluation_run_name": name, "app": app}


OPERATION_ROWS = Rows(
    EVALUATION_RUN_OPERATIONS,
    {
        "operation_name": text("name"),
        "done": boolean("done"),
        "create_time": timestamp("metadata.createTime"),
        "end_time": timestamp("metadata.endTime"),
        "verb": text("metadata.verb"),
        "cancel_requested": boolean("metadata.cancelRequested"),
        "error_code": given("error", bool, int32("error.code")),
        "error_message": _STATUS_MESSAGE,
    },
    derive=_operation_run,
)


class EvaluationOperationFlattener(FieldFlattener):
    """Operations of `run_evaluation` (google.longrunning.Operation with RunEvaluationOperationMetadata):
    `add(operation, observed_at)`, one fetched then (epoch microseconds)."""

    def __init__(self) -> None:
        specs, given = (EVALUATION_RUN_OPERATIONS,), ("observed_at",)
        super().__init__(specs, OPERATION_ROWS, OPERATION_REJECT_SOURCE, "operation", given)
