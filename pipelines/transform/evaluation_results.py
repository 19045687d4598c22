"""CES `EvaluationResult` JSON → `evaluation_results` and the tables that say why a result passed
or failed: turn replays, scores, expectation outcomes and results, latencies and scenario
verdicts, as field maps. Every numeric judgement lands in `evaluation_scores` (one row per score,
named by `metric`), so one query compares any metric across runs and app versions."""

from __future__ import annotations

from typing import Any

from pipelines import resource_names
from pipelines.transform import fields as f
from pipelines.transform import values as v
from pipelines.transform.evaluation_messages import outcome_columns
from pipelines.transform.evaluations import (
    ERROR_INFO_MESSAGE,
    ERROR_TYPE,
    error_details,
    error_message,
    tool_subject,
)
from pipelines.transform.fields import Column, FieldFlattener, Rows
from pipelines.transform.schemas import (
    EVALUATION_EXPECTATION_OUTCOMES,
    EVALUATION_EXPECTATION_RESULTS,
    EVALUATION_RESULT_LATENCIES,
    EVALUATION_RESULTS,
    EVALUATION_SCENARIO_RESULTS,
    EVALUATION_SCORES,
    EVALUATION_TURN_REPLAYS,
    RESULT_REJECT_SOURCE,
)

OUTCOME = "EvaluationResult.Outcome"


def _result_key(result: dict[str, Any], where: str) -> dict[str, Any]:
    """The key of every row of a result (its name and run), and the evaluation it belongs to."""
    name = v.text(result.get("name"), "name")
    match = resource_names.EVALUATION_RESULT.fullmatch(name or "")
    if match is None:
        raise v.SchemaViolation(f"name: not an evaluation result resource name: {str(name)[:120]!r}")
    run = v.text(result.get("evaluationRun"), "evaluationRun")
    return {"evaluation_result_name": name, "evaluation_run_name": run, "evaluation_name": match.group(1)}


def _result_type(result: dict[str, Any], where: str) -> str | None:
    return "golden" if "goldenResult" in result else "scenario" if "scenarioResult" in result else None


RESULT = {
    "display_name": f.text("displayName"),
    "create_time": f.timestamp("createTime"),
    "evaluation_status": f.enum("evaluationStatus", OUTCOME),
    "execution_state": f.enum("executionState", "EvaluationResult.ExecutionState"),
    "result_type": _result_type,
    "persona": f.text("persona.name"),
    "app_version": f.text("appVersion"),
    "initiated_by": f.text("initiatedBy"),
    "error_type": ERROR_TYPE,
    "error_message": error_message,
    "app_version_display_name": f.text("appVersionDisplayName"),
    "changelog": f.text("changelog"),
    "golden_run_method": f.enum("goldenRunMethod", "GoldenRunMethod"),
    "evaluation_metrics_thresholds": f.json("evaluationMetricsThresholds"),
    "changelog_create_time": f.timestamp("changelogCreateTime"),
    **error_details("error_"),
    "persona_speech_config": f.json("persona.speechConfig"),
}


def _scores(
    metric: str, fields: dict[str, Column], path: str = "", each: str = "one", when: Any = None
) -> Rows:
    """`evaluation_scores` rows of one metric, numbered across the result."""
    empty = dict.fromkeys(("rubric", "label", "outcome", "explanation"), f.const(None))
    return Rows(
        EVALUATION_SCORES,
        {**empty, "score_index": f.NUMBER, "metric": f.const(metric), **fields},
        path,
        each,
        when=when,
    )


_JUDGEMENT = {
    "score": f.score("score"),
    "label": f.text("label"),
    "outcome": f.enum("outcome", OUTCOME),
    "explanation": f.text("explanation"),
}
"""A HallucinationResult, SemanticSimilarityResult, TaskCompletionResult or
UserGoalSatisfactionResult (int32 score): a score row, none when it is absent."""
_OVERALL = {"score": f.double("toolInvocationScore"), "outcome": f.enum("outcome", OUTCOME)}
_RUBRIC = {"rubric": f.text("rubric"), "score": f.double("score"), "explanation": f.text("scoreExplanation")}


def _invocation_score(field: str, metric: str) -> Rows:
    """A turn's tool invocation score (a double), where the turn sends it."""
    return _scores(metric, {"score": f.double(field)}, when=lambda replay: field in replay)


def _span_subject(entry: Any, where: str) -> str | None:
    """What a span's latency is of: its resource, model or callback, or else its toolset's tool."""
    entry = v.message(entry, where[:-1])
    toolset = v.message(entry.get("toolset"), f"{where}toolset")
    subject = next((entry[key] for key in ("resource", "model", "callback") if entry.get(key)), None)
    if subject is None and toolset:
        subject = tool_subject({"toolsetTool": toolset}, where)
    return v.text(subject, f"{where}subject")


_LATENCY = {
    "latency_index": f.NUMBER,
    "display_name": f.text("displayName"),
    "start_time": f.timestamp("startTime"),
    "end_time": f.timestamp("endTime"),
    "latency_seconds": f.duration("executionLatency"),
}
_TOOL_CALL_LATENCY = {
    **_LATENCY,
    "kind": f.const("tool_call"),
    "span_type": f.const(None),
    "subject": f.text("tool"),
}
_SPAN_TYPE = f.enum("type", "EvaluationResult.SpanLatency.Type")
_SPAN_LATENCY = {**_LATENCY, "kind": f.const("span"), "span_type": _SPAN_TYPE, "subject": _span_subject}
_LATENCIES = (
    Rows(EVALUATION_RESULT_LATENCIES, _TOOL_CALL_LATENCY, "toolCallLatencies", "list"),
    Rows(EVALUATION_RESULT_LATENCIES, _SPAN_LATENCY, "spanLatencies", "list"),
)
_EXPECTATION_RESULT = {
    "expectation_index": f.NUMBER,
    "evaluation_expectation": f.text("evaluationExpectation"),
    "prompt": f.text("prompt"),
    "outcome": f.enum("outcome", OUTCOME),
    "explanation": f.text("explanation"),
}
_EXPECTATION_RESULTS = Rows(
    EVALUATION_EXPECTATION_RESULTS, _EXPECTATION_RESULT, "evaluationExpectationResults", "list"
)


def _enabled(config: str, flag: str) -> Column:
    """A metric override of a golden expectation: NULL where it overrides nothing; a config
    message set without its flag switches its metric off (False)."""
    path = f"expectation.{config}"
    return f.given(path, lambda value: value is not None, f.boolean(f"{path}.{flag}"))


_THRESHOLDS = "expectation.expectationLevelMetricsThresholdsOverride"
_CORRECTNESS = "toolInvocationParameterCorrectnessThreshold"
_SIMILARITY, _INVOCATION = "semanticSimilarityResult", "toolInvocationResult"
_OUTCOME = {
    "outcome_index": f.NUMBER,
    "outcome": f.enum("outcome", OUTCOME),
    "semantic_similarity_score": f.given(_SIMILARITY, bool, f.score(f"{_SIMILARITY}.score")),
    "semantic_similarity_outcome": f.enum(f"{_SIMILARITY}.outcome", OUTCOME),
    "parameter_correctness_score": f.given(
        _INVOCATION, bool, f.double(f"{_INVOCATION}.parameterCorrectnessScore")
    ),
    "tool_invocation_outcome": f.enum(f"{_INVOCATION}.outcome", OUTCOME),
    "tool_invocation_explanation": f.text(f"{_INVOCATION}.explanation"),
    "note": f.text("expectation.note"),
    "skip_evaluation": f.boolean("expectation.skipEvaluation"),
    "comparison_type": f.enum("expectation.comparisonType", "EvaluationMetricsConfig.ComparisonType"),
    "parameter_correctness_threshold": f.given(
        _THRESHOLDS,
        lambda override: _CORRECTNESS in override,
        f.double(f"{_THRESHOLDS}.{_CORRECTNESS}"),
        v.message,
    ),
    "semantic_similarity_enabled": _enabled(
        "agentResponseSemanticSimilarityMetricsConfigOverride", "enableSemanticSimilarityMetrics"
    ),
    "hallucination_enabled": _enabled(
        "agentResponseHallucinationMetricsConfigOverride", "enableHallucinationMetrics"
    ),
    "semantic_similarity_label": f.text(f"{_SIMILARITY}.label"),
    "semantic_similarity_explanation": f.text(f"{_SIMILARITY}.explanation"),
}


def _outcomes(path: str) -> Rows:
    return Rows(EVALUATION_EXPECTATION_OUTCOMES, _OUTCOME, path, "list", derive=outcome_columns)


_TURN_REPLAY = {
    "conversation_name": f.text("conversation"),
    "turn_latency_seconds": f.duration("turnLatency"),
    "error_type": ERROR_TYPE,
    "error_message": ERROR_INFO_MESSAGE,
    "error_session_id": f.text("errorInfo.sessionId"),
    "user_facing_error_message": f.text("errorInfo.userFacingErrorMessage"),
}
_TURN_REPLAYS = Rows(
    EVALUATION_TURN_REPLAYS,
    _TURN_REPLAY,
    "turnReplayResults",
    "list",
    "turn_index",
    children=(
        _scores("semantic_similarity", _JUDGEMENT, "semanticSimilarityResult"),
        _scores("hallucination", _JUDGEMENT, "hallucinationResult"),
        _invocation_score("toolInvocationScore", "tool_invocation"),
        _invocation_score("toolOrderedInvocationScore", "tool_ordered_invocation"),
        _scores("overall_tool_invocation", _OVERALL, "overallToolInvocationResult", when=bool),
        _outcomes("expectationOutcome"),
        *_LATENCIES,
    ),
)
_SCENARIO = {
    "conversation_name": f.text("conversation"),
    "task": f.text("task"),
    "user_facts": f.json("userFacts", v.array),
    "all_expectations_satisfied": f.boolean("allExpectationsSatisfied"),
    "task_completed": f.boolean("taskCompleted"),
}


def _no_turn(scenario: Any, where: str) -> dict[str, Any]:
    return {"turn_index": None}


RESULT_ROWS = Rows(
    EVALUATION_RESULTS,
    RESULT,
    derive=_result_key,
    children=(
        Rows(None, path="goldenResult", when=bool, children=(_TURN_REPLAYS, _EXPECTATION_RESULTS)),
        Rows(
            EVALUATION_SCENARIO_RESULTS,
            _SCENARIO,
            "scenarioResult",
            when=bool,
            derive=_no_turn,
            children=(
                _scores("task_completion", _JUDGEMENT, "taskCompletionResult"),
                _scores("user_goal_satisfaction", _JUDGEMENT, "userGoalSatisfactionResult"),
                _scores("hallucination", _JUDGEMENT, "hallucinationResult", "list"),
                _scores("rubric", _RUBRIC, "rubricOutcomes", "list"),
                _outcomes("expectationOutcomes"),
                *_LATENCIES,
                _EXPECTATION_RESULTS,
            ),
        ),
    ),
)


class EvaluationResultFlattener(FieldFlattener):
    def __init__(self) -> None:
        super().__init__(RESULT_ROWS, RESULT_REJECT_SOURCE, "evaluationResult")
