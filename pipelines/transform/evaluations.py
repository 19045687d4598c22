"""Flatten CES `EvaluationRun` JSON (and the operations that started runs) into the evaluation run tables."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from pipelines import resource_names
from pipelines.protojson.enums import enum_name
from pipelines.transform import values as v
from pipelines.transform.rows import RowBuffer, TableBuffers
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

PROGRESS_FIELDS = (
    "totalCount",
    "passedCount",
    "failedCount",
    "errorCount",
    "completedCount",
    "cancelledCount",
)

_LATENCY_KINDS = (
    # (report field, kind, subject reader, display-name field)
    ("toolLatencies", "tool", None, "toolDisplayName"),
    ("callbackLatencies", "callback", "stage", None),
    ("guardrailLatencies", "guardrail", "guardrail", "guardrailDisplayName"),
    ("llmCallLatencies", "llm_call", "model", None),
)


def run_name(run: dict[str, Any]) -> tuple[str, str, str]:
    """(name, app, run id) of an EvaluationRun, or a SchemaViolation."""
    name = v.text(run.get("name"), "name")
    match = resource_names.EVALUATION_RUN.fullmatch(name or "")
    if match is None:
        raise v.SchemaViolation(f"name: not an evaluation run resource name: {str(name)[:120]!r}")
    return name, match.group(1), match.group(2)


def progress_counts(run: dict[str, Any]) -> tuple[int, ...]:
    progress = v.message(run.get("progress"), "progress")
    return tuple(v.int32(progress.get(field), f"progress.{field}") for field in PROGRESS_FIELDS)


def error_fields(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str | None, str | None]:
    """A run's or result's `errorInfo`, `error` (a Status), error type, and message: errorInfo's if any."""
    info = v.message(obj.get("errorInfo"), "errorInfo")
    status = v.message(obj.get("error"), "error")
    error_type = enum_name(info.get("errorType"), "EvaluationErrorInfo.ErrorType", "errorInfo.errorType")
    if info:
        return info, status, error_type, v.text(info.get("errorMessage"), "errorInfo.errorMessage")
    return info, status, error_type, v.text(status.get("message"), "error.message")


def error_detail_columns(info: dict[str, Any], status: dict[str, Any]) -> tuple[Any, ...]:
    """The columns every error row shares: `errorInfo`'s session and user-facing message, and the
    Status's code, message and details (JSON), from what `error_fields` returned."""
    details = v.array(status.get("details"), "error.details")
    return (
        v.text(info.get("sessionId"), "errorInfo.sessionId"),
        v.text(info.get("userFacingErrorMessage"), "errorInfo.userFacingErrorMessage"),
        v.int32(status.get("code"), "error.code") if status else None,
        v.text(status.get("message"), "error.message"),
        v.json_text(details, "error.details") if details else None,
    )


class EvaluationRunFlattener(TableBuffers):
    def __init__(self) -> None:
        super().__init__(EVALUATION_RUN_TABLES, RUN_REJECT_SOURCE)

    def __len__(self) -> int:
        return len(self.rows(EVALUATION_RUNS))

    def add(self, run: Any, observed_at: int) -> bool:
        """Flatten one run fetched at `observed_at` (epoch microseconds); False if rejected."""
        return self.flatten(run, lambda obj: self._add(obj, observed_at))

    def _add(self, run: Any, observed_at: int) -> None:
        run = v.message(run, "evaluationRun")
        name, app, run_id = run_name(run)
        config = v.message(run.get("config"), "config")
        error_info, status, error_type, error_message = error_fields(run)
        report = v.message(run.get("latencyReport"), "latencyReport")
        optimization = v.message(run.get("optimizationConfig"), "optimizationConfig")
        self.rows(EVALUATION_RUNS).append(
            (
                name,
                app,
                run_id,
                v.text(run.get("displayName"), "displayName"),
                v.timestamp(run.get("createTime"), "createTime"),
                v.text(run.get("initiatedBy"), "initiatedBy"),
                v.text(run.get("appVersion"), "appVersion"),
                v.text(run.get("appVersionDisplayName"), "appVersionDisplayName"),
                v.text(run.get("changelog"), "changelog"),
                v.timestamp(run.get("changelogCreateTime"), "changelogCreateTime"),
                v.text(run.get("evaluationDataset"), "evaluationDataset"),
                enum_name(run.get("evaluationType"), "EvaluationRun.EvaluationType", "evaluationType"),
                enum_name(run.get("state"), "EvaluationRun.EvaluationRunState", "state"),
                *progress_counts(run),
                v.int32(run.get("runCount"), "runCount"),
                enum_name(run.get("goldenRunMethod"), "GoldenRunMethod", "goldenRunMethod"),
                enum_name(
                    config.get("evaluationChannel"),
                    "EvaluationConfig.EvaluationChannel",
                    "config.evaluationChannel",
                ),
                enum_name(
                    config.get("toolCallBehaviour"), "EvaluationToolCallBehaviour", "config.toolCallBehaviour"
                ),
                error_type,
                error_message,
                v.int32(report.get("sessionCount"), "latencyReport.sessionCount"),
                v.text(run.get("scheduledEvaluationRun"), "scheduledEvaluationRun"),
                v.text(run.get("operation"), "operation"),
                enum_name(
                    optimization.get("status"),
                    "OptimizationConfig.OptimizationStatus",
                    "optimizationConfig.status",
                ),
                observed_at,
            )
        )
        self._add_summaries(name, run)
        self._add_latencies(name, report)
        self._add_lists(name, run)
        if error_info or status:
            self.rows(EVALUATION_RUN_ERRORS).append(
                (
                    name,
                    error_type,
                    v.text(error_info.get("errorMessage"), "errorInfo.errorMessage"),
                    *error_detail_columns(error_info, status),
                )
            )

    def _add_summaries(self, name: str, run: dict[str, Any]) -> None:
        summaries = v.message(run.get("evaluationRunSummaries"), "evaluationRunSummaries")
        rows = self.rows(EVALUATION_RUN_SUMMARIES)
        for evaluation, summary in summaries.items():
            summary = v.message(summary, f"evaluationRunSummaries[{evaluation}]")
            rows.append(
                (
                    name,
                    evaluation,
                    v.int32(summary.get("passedCount"), "passedCount"),
                    v.int32(summary.get("failedCount"), "failedCount"),
                    v.int32(summary.get("errorCount"), "errorCount"),
                )
            )

    def _add_latencies(self, name: str, report: dict[str, Any]) -> None:
        rows = self.rows(EVALUATION_RUN_LATENCIES)
        for field, kind, subject_field, display_field in _LATENCY_KINDS:
            for index, entry in enumerate(v.array(report.get(field), f"latencyReport.{field}")):
                label = f"latencyReport.{field}[{index}]"
                entry = v.message(entry, label)
                metrics = v.message(entry.get("latencyMetrics"), f"{label}.latencyMetrics")
                if subject_field is None:
                    subject = tool_subject(entry, label)
                else:
                    subject = v.text(entry.get(subject_field), f"{label}.{subject_field}")
                rows.append(
                    (
                        name,
                        kind,
                        subject,
                        v.text(entry.get(display_field), f"{label}.{display_field}")
                        if display_field
                        else None,
                        v.duration(metrics.get("p50Latency"), f"{label}.p50Latency"),
                        v.duration(metrics.get("p90Latency"), f"{label}.p90Latency"),
                        v.duration(metrics.get("p99Latency"), f"{label}.p99Latency"),
                        v.int32(metrics.get("callCount"), f"{label}.callCount"),
                        index,
                    )
                )

    def _add_lists(self, name: str, run: dict[str, Any]) -> None:
        personas = self.rows(EVALUATION_RUN_PERSONAS)
        for index, config in enumerate(v.array(run.get("personaRunConfigs"), "personaRunConfigs")):
            config = v.message(config, f"personaRunConfigs[{index}]")
            personas.append(
                (
                    name,
                    index,
                    v.text(config.get("persona"), "personaRunConfigs.persona"),
                    v.int32(config.get("taskCount"), "personaRunConfigs.taskCount"),
                )
            )
        evaluations = self.rows(EVALUATION_RUN_EVALUATIONS)
        for index, evaluation in enumerate(v.array(run.get("evaluations"), "evaluations")):
            evaluations.append((name, index, v.text(evaluation, "evaluations[]")))
        results = self.rows(EVALUATION_RUN_RESULTS)
        for index, result in enumerate(v.array(run.get("evaluationResults"), "evaluationResults")):
            results.append((name, index, v.text(result, "evaluationResults[]")))


def tool_subject(entry: dict[str, Any], label: str) -> str | None:
    """The tool's name, or `{toolset}/{toolId}` (or the toolset alone), as `tool_label` in the views."""
    tool = v.text(entry.get("tool"), f"{label}.tool")
    if tool:
        return tool
    toolset_tool = v.message(entry.get("toolsetTool"), f"{label}.toolsetTool")
    toolset = v.text(toolset_tool.get("toolset"), f"{label}.toolsetTool.toolset")
    tool_id = v.text(toolset_tool.get("toolId"), f"{label}.toolsetTool.toolId")
    if toolset is None:
        return None
    return f"{toolset}/{tool_id}" if tool_id else toolset


def snapshot_row(run: dict[str, Any], observed_at_micros: int) -> tuple[Any, ...]:
    name, _, _ = run_name(run)
    return (
        name,
        observed_at_micros,
        enum_name(run.get("state"), "EvaluationRun.EvaluationRunState", "state"),
        *progress_counts(run),
    )


def snapshots_batch(rows: Iterable[tuple[Any, ...]]) -> pa.RecordBatch:
    buffer = RowBuffer(EVALUATION_RUN_SNAPSHOTS)
    buffer.rows.extend(rows)
    return buffer.to_batch()


class EvaluationOperationFlattener(TableBuffers):
    """Operations of `run_evaluation` (google.longrunning.Operation with RunEvaluationOperationMetadata)."""

    def __init__(self) -> None:
        super().__init__((EVALUATION_RUN_OPERATIONS,), OPERATION_REJECT_SOURCE)

    def add(self, operation: Any, observed_at: int) -> bool:
        """Flatten one operation fetched at `observed_at` (epoch microseconds); False if rejected."""
        return self.flatten(operation, lambda obj: self._add(obj, observed_at))

    def _add(self, operation: Any, observed_at: int) -> None:
        operation = v.message(operation, "operation")
        metadata = v.message(operation.get("metadata"), "metadata")
        response = v.message(operation.get("response"), "response")
        error = v.message(operation.get("error"), "error")
        run = v.text(metadata.get("evaluationRun"), "metadata.evaluationRun") or v.text(
            response.get("evaluationRun"), "response.evaluationRun"
        )
        if run is None:
            raise v.SchemaViolation("metadata.evaluationRun: the operation names no evaluation run")
        name, app, _ = run_name({"name": run})
        self.rows(EVALUATION_RUN_OPERATIONS).append(
            (
                name,
                app,
                v.text(operation.get("name"), "name"),
                v.boolean(operation.get("done"), "done"),
                v.timestamp(metadata.get("createTime"), "metadata.createTime"),
                v.timestamp(metadata.get("endTime"), "metadata.endTime"),
                v.text(metadata.get("verb"), "metadata.verb"),
                v.boolean(metadata.get("cancelRequested"), "metadata.cancelRequested"),
                v.int32(error.get("code"), "error.code") if error else None,
                v.text(error.get("message"), "error.message"),
                observed_at,
            )
        )
