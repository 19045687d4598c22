"""Enum values of the CES API as the warehouse stores them: by name, whether sent as names or numbers
(proto3 JSON parsers accept both), so that a number and its name count as one value; a number this
version does not know is kept as its decimal string. A test holds the names to `google-cloud-ces`.
"""

from __future__ import annotations

from typing import Any

from pipelines.protojson.violations import SchemaViolation

ENUMS: dict[str, tuple[str, ...]] = {
    "Conversation.Source": ("SOURCE_UNSPECIFIED", "LIVE", "SIMULATOR", "EVAL", "AGENT_TOOL"),
    "Conversation.ChannelType": ("CHANNEL_TYPE_UNSPECIFIED", "TEXT", "AUDIO", "MULTIMODAL"),
    "Conversation.InputType": (
        "INPUT_TYPE_UNSPECIFIED",
        "INPUT_TYPE_TEXT",
        "INPUT_TYPE_AUDIO",
        "INPUT_TYPE_IMAGE",
        "INPUT_TYPE_BLOB",
        "INPUT_TYPE_TOOL_RESPONSE",
        "INPUT_TYPE_VARIABLES",
        "INPUT_TYPE_EVENT",
    ),
    "EvaluationRun.EvaluationType": ("EVALUATION_TYPE_UNSPECIFIED", "GOLDEN", "SCENARIO", "MIXED"),
    "EvaluationRun.EvaluationRunState": (
        "EVALUATION_RUN_STATE_UNSPECIFIED",
        "RUNNING",
        "COMPLETED",
        "ERROR",
        "CANCELLED",
        "QUEUED",
    ),
    "GoldenRunMethod": ("GOLDEN_RUN_METHOD_UNSPECIFIED", "STABLE", "NAIVE"),
    "EvaluationConfig.EvaluationChannel": ("EVALUATION_CHANNEL_UNSPECIFIED", "TEXT", "AUDIO"),
    "EvaluationToolCallBehaviour": ("EVALUATION_TOOL_CALL_BEHAVIOUR_UNSPECIFIED", "REAL", "FAKE"),
    "EvaluationErrorInfo.ErrorType": (
        "ERROR_TYPE_UNSPECIFIED",
        "RUNTIME_FAILURE",
        "CONVERSATION_RETRIEVAL_FAILURE",
        "METRIC_CALCULATION_FAILURE",
        "EVALUATION_UPDATE_FAILURE",
        "QUOTA_EXHAUSTED",
        "USER_SIMULATION_FAILURE",
    ),
    "OptimizationConfig.OptimizationStatus": (
        "OPTIMIZATION_STATUS_UNSPECIFIED",
        "RUNNING",
        "COMPLETED",
        "ERROR",
    ),
    "EvaluationResult.Outcome": ("OUTCOME_UNSPECIFIED", "PASS", "FAIL", "SKIPPED"),
    "EvaluationResult.ExecutionState": (
        "EXECUTION_STATE_UNSPECIFIED",
        "RUNNING",
        "COMPLETED",
        "ERROR",
        "CANCELLED",
        "QUEUED",
    ),
    "EvaluationMetricsConfig.ComparisonType": (
        "COMPARISON_TYPE_UNSPECIFIED",
        "EQUALS",
        "CONTAINS",
        "SEMANTIC_SIMILARITY",
    ),
    "EvaluationResult.SpanLatency.Type": ("TYPE_UNSPECIFIED", "TOOL", "USER_CALLBACK", "GUARDRAIL", "LLM"),
}
"""Each enum's value names, the value's number being its position."""


def enum_name(value: Any, enum: str, field: str) -> str | None:
    """The name of an enum value sent as its name or its number; None when absent."""
    if value is None or type(value) is str:
        return value
    if type(value) is int:
        names = ENUMS[enum]
        return names[value] if 0 <= value < len(names) else str(value)
    raise SchemaViolation(f"{field}: expected an enum name or number, got {type(value).__name__}")
