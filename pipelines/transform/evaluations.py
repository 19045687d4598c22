"""CES `EvaluationRun` JSON (and the operations that started runs) → the evaluation run tables, as
field maps: each column's path in the JSON and its reader."""

from __future__ import annotations

from typing import Any

from pipelines import resource_names
from pipelines.transform import fields as f
from pipelines.transform import values as v
from pipelines.transform.fields import Column, FieldFlattener, Rows
from pipelines.transform.schemas import (
    EVALUATION_RUN_ERRORS,
    EVALUATION_RUN_EVALUATIONS,
    EVALUATION_RUN_LATENCIES,
    EVALUATION_RUN_OPERATIONS,
    EVALUATION_RUN_PERSONAS,
    EVALUATION_RUN_RESULTS,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_SUMMARIES,
    EVALUATION_RUNS,
    OPERATION_REJECT_SOURCE,
    RUN_REJECT_SOURCE,
    TableSpec,
)


def run_name(run: dict[str, Any]) -> tuple[str, str, str]:
    """(name, app, run id) of an EvaluationRun, or a SchemaViolation."""
    name = v.text(run.get("name"), "name")
    match = resource_names.EVALUATION_RUN.fullmatch(name or "")
    if match is None:
        raise v.SchemaViolation(f"name: not an evaluation run resource name: {str(name)[:120]!r}")
    return name, match.group(1), match.group(2)


def _run_key(run: dict[str, Any], where: str) -> dict[str, Any]:
    return dict(zip(("evaluation_run_name", "app", "evaluation_run_id"), run_name(run), strict=True))


ERROR_TYPE = f.enum("errorInfo.errorType", "EvaluationErrorInfo.ErrorType")
ERROR_INFO_MESSAGE, _STATUS_MESSAGE = f.text("errorInfo.errorMessage"), f.text("error.message")
_ERROR_INFO = f.at("errorInfo", v.message)


def error_message(obj: Any, where: str) -> str | None:
    """A run's or result's error message: its `errorInfo`'s if it has one, else its Status's."""
    return (ERROR_INFO_MESSAGE if _ERROR_INFO(obj, where) else _STATUS_MESSAGE)(obj, where)


def error_details(prefix: str) -> dict[str, Column]:
    """The columns every error row shares: `errorInfo`'s session and user-facing message, and the
    Status's code, message and details (JSON); `prefix` starts the names of all but one."""
    return {
        f"{prefix}session_id": f.text("errorInfo.sessionId"),
        "user_facing_error_message": f.text("errorInfo.userFacingErrorMessage"),
        f"{prefix}status_code": f.given("error", bool, f.int32("error.code")),
        f"{prefix}status_message": _STATUS_MESSAGE,
        f"{prefix}status_details": f.json("error.details", v.array),
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


_PROGRESS = ("total", "passed", "failed", "error", "completed", "cancelled")
RUN = {
    "display_name": f.text("displayName"),
    "create_time": f.timestamp("createTime"),
    "initiated_by": f.text("initiatedBy"),
    "app_version": f.text("appVersion"),
    "app_version_display_name": f.text("appVersionDisplayName"),
    "changelog": f.text("changelog"),
    "changelog_create_time": f.timestamp("changelogCreateTime"),
    "evaluation_dataset": f.text("evaluationDataset"),
    "evaluation_type": f.enum("evaluationType", "EvaluationRun.EvaluationType"),
    "state": f.enum("state", "EvaluationRun.EvaluationRunState"),
    **{f"{count}_count": f.int32(f"progress.{count}Count") for count in _PROGRESS},
    "run_count": f.int32("runCount"),
    "golden_run_method": f.enum("goldenRunMethod", "GoldenRunMethod"),
    "evaluation_channel": f.enum("config.evaluationChannel", "EvaluationConfig.EvaluationChannel"),
    "tool_call_behaviour": f.enum("config.toolCallBehaviour", "EvaluationToolCallBehaviour"),
    "error_type": ERROR_TYPE,
    "error_message": error_message,
    "latency_session_count": f.int32("latencyReport.sessionCount"),
    "scheduled_evaluation_run": f.text("scheduledEvaluationRun"),
    "operation": f.text("operation"),
    "optimization_status": f.enum("optimizationConfig.status", "OptimizationConfig.OptimizationStatus"),
}
_SUMMARY = {f"{n}_count": f.int32(f"{n}Count") for n in ("passed", "failed", "error")}
_PERSONA = {"persona": f.text("persona"), "task_count": f.int32("taskCount")}
_ERROR = {"error_type": ERROR_TYPE, "error_message": ERROR_INFO_MESSAGE, **error_details("")}
_METRICS = {f"p{p}_seconds": f.duration(f"latencyMetrics.p{p}Latency") for p in (50, 90, 99)}


def _latencies(field: str, kind: str, subject: Column, display: Column) -> Rows:
    """The entries of one list of the run's latency report, numbered within it."""
    fields = {"kind": f.const(kind), "subject": subject, "display_name": display, **_METRICS}
    fields["call_count"] = f.int32("latencyMetrics.callCount")
    return Rows(EVALUATION_RUN_LATENCIES, fields, f"latencyReport.{field}", "list", "entry_index")


def _named(table: TableSpec, column: str, field: str, index: str) -> Rows:
    """A list of resource names in the run, a row each."""
    return Rows(table, {column: f.text("")}, field, "list", index)


RUN_ROWS = Rows(
    EVALUATION_RUNS,
    RUN,
    derive=_run_key,
    children=(
        Rows(EVALUATION_RUN_SUMMARIES, _SUMMARY, "evaluationRunSummaries", "map", "evaluation_name"),
        _latencies("toolLatencies", "tool", tool_subject, f.text("toolDisplayName")),
        _latencies("callbackLatencies", "callback", f.text("stage"), f.const(None)),
        _latencies("guardrailLatencies", "guardrail", f.text("guardrail"), f.text("guardrailDisplayName")),
        _latencies("llmCallLatencies", "llm_call", f.text("model"), f.const(None)),
        Rows(EVALUATION_RUN_PERSONAS, _PERSONA, "personaRunConfigs", "list", "persona_index"),
        _named(EVALUATION_RUN_EVALUATIONS, "evaluation_name", "evaluations", "evaluation_index"),
        _named(EVALUATION_RUN_RESULTS, "evaluation_result_name", "evaluationResults", "result_index"),
        Rows(EVALUATION_RUN_ERRORS, _ERROR, when=lambda run: bool(run.get("errorInfo") or run.get("error"))),
        Rows(EVALUATION_RUN_SNAPSHOTS, RUN),  # its state and progress when observed
    ),
)


class EvaluationRunFlattener(FieldFlattener):
    """`add(run, observed_at)`: a run fetched then (epoch microseconds); False if rejected."""

    def __init__(self) -> None:
        super().__init__(RUN_ROWS, RUN_REJECT_SOURCE, "evaluationRun", ("observed_at",))


_METADATA_RUN, _RESPONSE = f.text("metadata.evaluationRun"), f.at("response", v.message)


def _operation_run(operation: dict[str, Any], where: str) -> dict[str, Any]:
    """The run an operation started, named by its metadata or its response."""
    response = _RESPONSE(operation, where)
    run = _METADATA_RUN(operation, where) or v.text(response.get("evaluationRun"), "response.evaluationRun")
    if run is None:
        raise v.SchemaViolation("metadata.evaluationRun: the operation names no evaluation run")
    name, app, _ = run_name({"name": run})
    return {"evaluation_run_name": name, "app": app}


OPERATION = {
    "operation_name": f.text("name"),
    "done": f.boolean("done"),
    "create_time": f.timestamp("metadata.createTime"),
    "end_time": f.timestamp("metadata.endTime"),
    "verb": f.text("metadata.verb"),
    "cancel_requested": f.boolean("metadata.cancelRequested"),
    "error_code": f.given("error", bool, f.int32("error.code")),
    "error_message": _STATUS_MESSAGE,
}


class EvaluationOperationFlattener(FieldFlattener):
    """Operations of `run_evaluation` (google.longrunning.Operation with RunEvaluationOperationMetadata):
    `add(operation, observed_at)`, one fetched then (epoch microseconds)."""

    def __init__(self) -> None:
        rows = Rows(EVALUATION_RUN_OPERATIONS, OPERATION, derive=_operation_run)
        super().__init__(rows, OPERATION_REJECT_SOURCE, "operation", ("observed_at",))
