"""CES `EvaluationResult` JSON → `evaluation_results` and the tables that say why a result passed
or failed: turn replays, scores, expectation outcomes and results, latencies and scenario
verdicts, as field maps. Every numeric judgement lands in `evaluation_scores` (one row per score,
named by `metric`), so one query compares any metric across runs and app versions."""

from __future__ import annotations

from typing import Any

from pipelines import resource_names
from pipelines.transform import evaluation_messages as messages
from pipelines.transform import values as v
from pipelines.transform.evaluations import ERROR_TYPE, error_details, error_message, tool_subject
from pipelines.transform.fields import (
    NUMBER,
    Column,
    FieldFlattener,
    Rows,
    boolean,
    const,
    double,
    duration,
    enum,
    given,
    json,
    score,
    text,
    timestamp,
)
from pipelines.transform.schemas import (
    EVALUATION_EXPECTATION_OUTCOMES,
    EVALUATION_EXPECTATION_RESULTS,
    EVALUATION_RESULT_LATENCIES,
    EVALUATION_RESULT_TABLES,
    EVALUATION_RESULTS,
    EVALUATION_SCENARIO_RESULTS,
    EVALUATION_SCORES,
    EVALUATION_TURN_REPLAYS,
    RESULT_REJECT_SOURCE,
)

OUTCOME = "EvaluationResult.Outcome"

_EXPECTATION_KINDS = (
    ("toolCall", "tool_call"),
    ("toolResponse", "tool_response"),
    ("agentResponse", "agent_response"),
    ("agentTransfer", "agent_transfer"),
    ("updatedVariables", "updated_variables"),
    ("mockToolResponse", "mock_tool_response"),
)
"""An expectation's kind: the first of these fields it sets (a golden one's `noToolCalls`
otherwise; a scenario's `toolExpectation` is a tool call)."""
_TOOL_FIELDS = ("toolCall", "toolResponse", "mockToolResponse")
"""The fields of a golden expectation that name a tool (`expected_tool`)."""
_OBSERVED = (
    ("observedToolCall", "tool_call"),
    ("observedToolResponse", "tool_response"),
    ("observedAgentResponse", "agent_response"),
    ("observedAgentTransfer", "agent_transfer"),
    ("observedPayload", "payload"),
)
_SPAN_SUBJECTS = ("resource", "model", "callback")


def _result_names(result: dict[str, Any], where: str) -> dict[str, Any]:
    """The key of every row of a result (its name and run) and the evaluation it belongs to."""
    name = v.text(result.get("name"), "name")
    match = resource_names.EVALUATION_RESULT.fullmatch(name or "")
    if match is None:
        raise v.SchemaViolation(f"name: not an evaluation result resource name: {str(name)[:120]!r}")
    run = v.text(result.get("evaluationRun"), "evaluationRun")
    return {"evaluation_result_name": name, "evaluation_run_name": run, "evaluation_name": match.group(1)}


def _result_type(result: dict[str, Any], where: str) -> str | None:
    return "golden" if "goldenResult" in result else "scenario" if "scenarioResult" in result else None


RESULT = {
    "display_name": text("displayName"),
    "create_time": timestamp("createTime"),
    "evaluation_status": enum("evaluationStatus", OUTCOME),
    "execution_state": enum("executionState", "EvaluationResult.ExecutionState"),
    "result_type": _result_type,
    "persona": text("persona.name"),
    "app_version": text("appVersion"),
    "initiated_by": text("initiatedBy"),
    "error_type": ERROR_TYPE,
    "error_message": error_message,
    "app_version_display_name": text("appVersionDisplayName"),
    "changelog": text("changelog"),
    "golden_run_method": enum("goldenRunMethod", "GoldenRunMethod"),
    "evaluation_metrics_thresholds": json("evaluationMetricsThresholds"),
    "changelog_create_time": timestamp("changelogCreateTime"),
    **error_details("error_"),
    "persona_speech_config": json("persona.speechConfig"),
}


def _scores(
    metric: str, fields: dict[str, Column], path: str = "", each: Any = "one", when: Any = None
) -> Rows:
    """`evaluation_scores` rows of one metric, numbered across the result."""
    empty = dict.fromkeys(("rubric", "label", "outcome", "explanation"), const(None))
    columns = {**empty, "score_index": NUMBER, "metric": const(metric), **fields}
    return Rows(EVALUATION_SCORES, columns, path, each, when=when)


def _judgement(metric: str, path: str, each: Any = "one") -> Rows:
    """A HallucinationResult, SemanticSimilarityResult, TaskCompletionResult or
    UserGoalSatisfactionResult (int32 score) as a score row; none when it is absent."""
    fields = {"score": score("score"), "label": text("label"), "outcome": enum("outcome", OUTCOME)}
    return _scores(metric, {**fields, "explanation": text("explanation")}, path, each)


def _invocation_score(field: str, metric: str) -> Rows:
    """A turn's tool invocation score (a double), where the turn sends it."""
    return _scores(metric, {"score": double(field)}, when=lambda replay: field in replay)


def _span_subject(entry: Any, where: str) -> str | None:
    """What a span's latency is of: its resource, model or callback, or else its toolset's tool."""
    entry = v.message(entry, where[:-1])
    toolset = v.message(entry.get("toolset"), f"{where}toolset")
    subject = next((entry[f] for f in _SPAN_SUBJECTS if entry.get(f)), None)
    if subject is None and toolset:
        subject = tool_subject({"toolsetTool": toolset}, where)
    return v.text(subject, f"{where}subject")


_LATENCY = {
    "latency_index": NUMBER,
    "display_name": text("displayName"),
    "start_time": timestamp("startTime"),
    "end_time": timestamp("endTime"),
    "latency_seconds": duration("executionLatency"),
}
_LATENCIES = (
    Rows(
        EVALUATION_RESULT_LATENCIES,
        {**_LATENCY, "kind": const("tool_call"), "span_type": const(None), "subject": text("tool")},
        "toolCallLatencies",
        "list",
    ),
    Rows(
        EVALUATION_RESULT_LATENCIES,
        {
            **_LATENCY,
            "kind": const("span"),
            "span_type": enum("type", "EvaluationResult.SpanLatency.Type"),
            "subject": _span_subject,
        },
        "spanLatencies",
        "list",
    ),
)
_EXPECTATION_RESULTS = Rows(
    EVALUATION_EXPECTATION_RESULTS,
    {
        "expectation_index": NUMBER,
        "evaluation_expectation": text("evaluationExpectation"),
        "prompt": text("prompt"),
        "outcome": enum("outcome", OUTCOME),
        "explanation": text("explanation"),
    },
    "evaluationExpectationResults",
    "list",
)


def _outcome_columns(outcome: Any, where: str) -> dict[str, Any]:
    """The columns of a golden turn's or a scenario's expectation outcome that take more than a
    field. Their fields share names, but a scenario's expected tool call sits in `toolExpectation`
    (with the response it mocks). An agent response, expected or observed, is kept as proto3 JSON
    prints it, so that every legal form of it reads the same."""
    outcome = v.message(outcome, where[:-1])
    expectation = dict(v.message(outcome.get("expectation"), f"{where}expectation"))
    scenario_tool = v.message(expectation.get("toolExpectation"), f"{where}expectation.toolExpectation")
    if scenario_tool:
        kind, call_field, parent = "tool_call", "expectedToolCall", scenario_tool
    else:
        kind = next((kind for field, kind in _EXPECTATION_KINDS if field in expectation), None)
        if kind is None and expectation.get("noToolCalls"):
            kind = "no_tool_calls"
        call_field = next((f for f in _TOOL_FIELDS if f in expectation), "toolCall")
        parent = expectation
    call = v.message(parent.get(call_field), f"{where}expectation.{call_field}")
    expected = expectation.get("agentResponse")
    if expected is not None:
        expected = messages.canonical_message(expected, f"{where}expectation.agentResponse")
        expectation["agentResponse"] = expected
    observed_field, observed_kind = next(((f, k) for f, k in _OBSERVED if f in outcome), (None, None))
    observed = outcome.get(observed_field) if observed_field else None
    response = None
    if observed_kind == "agent_response":
        observed = response = messages.canonical_message(observed, f"{where}{observed_field}")
    return {
        "expectation_kind": kind,
        "expected_tool": tool_subject(call, f"{where}expectation.{call_field}.") if call else None,
        "expectation": v.json_text(expectation, f"{where}expectation") if expectation else None,
        "observed_kind": observed_kind,
        "observed": v.json_text(observed, f"{where}{observed_field}") if observed is not None else None,
        "expected_text": messages.said(expected),
        "observed_text": messages.said(response),
        "observed_time": v.timestamp(response.get("eventTime"), f"{where}{observed_field}.eventTime")
        if response
        else None,
        "observed_tool": messages.observed_tool(observed, f"{where}{observed_field}")
        if observed_kind in ("tool_call", "tool_response")
        else None,
        "expected_agent": messages.transfer_target(
            expectation.get("agentTransfer"), expected, f"{where}expectation"
        ),
        "observed_agent": messages.transfer_target(
            outcome.get("observedAgentTransfer"), response, f"{where}observed"
        ),
    }


def _enabled(config: str, flag: str) -> Column:
    """A metric override of a golden expectation: NULL where it overrides nothing; a config
    message set without its flag switches its metric off (False)."""
    path = f"expectation.{config}"
    return given(path, lambda value: value is not None, boolean(f"{path}.{flag}"))


_THRESHOLDS, _CORRECTNESS = (
    "expectation.expectationLevelMetricsThresholdsOverride",
    "toolInvocationParameterCorrectnessThreshold",
)
_SIMILARITY, _INVOCATION = "semanticSimilarityResult", "toolInvocationResult"
_OUTCOME = {
    "outcome_index": NUMBER,
    "outcome": enum("outcome", OUTCOME),
    "semantic_similarity_score": given(_SIMILARITY, bool, score(f"{_SIMILARITY}.score")),
    "semantic_similarity_outcome": enum(f"{_SIMILARITY}.outcome", OUTCOME),
    "parameter_correctness_score": given(
        _INVOCATION, bool, double(f"{_INVOCATION}.parameterCorrectnessScore")
    ),
    "tool_invocation_outcome": enum(f"{_INVOCATION}.outcome", OUTCOME),
    "tool_invocation_explanation": text(f"{_INVOCATION}.explanation"),
    "note": text("expectation.note"),
    "skip_evaluation": boolean("expectation.skipEvaluation"),
    "comparison_type": enum("expectation.comparisonType", "EvaluationMetricsConfig.ComparisonType"),
    "parameter_correctness_threshold": given(
        _THRESHOLDS,
        lambda override: _CORRECTNESS in override,
        double(f"{_THRESHOLDS}.{_CORRECTNESS}"),
        v.message,
    ),
    "semantic_similarity_enabled": _enabled(
        "agentResponseSemanticSimilarityMetricsConfigOverride", "enableSemanticSimilarityMetrics"
    ),
    "hallucination_enabled": _enabled(
        "agentResponseHallucinationMetricsConfigOverride", "enableHallucinationMetrics"
    ),
    "semantic_similarity_label": text(f"{_SIMILARITY}.label"),
    "semantic_similarity_explanation": text(f"{_SIMILARITY}.explanation"),
}


def _outcomes(path: str) -> Rows:
    return Rows(EVALUATION_EXPECTATION_OUTCOMES, _OUTCOME, path, "list", derive=_outcome_columns)


_TURN_REPLAYS = Rows(
    EVALUATION_TURN_REPLAYS,
    {
        "conversation_name": text("conversation"),
        "turn_latency_seconds": duration("turnLatency"),
        "error_type": ERROR_TYPE,
        "error_message": text("errorInfo.errorMessage"),
        "error_session_id": text("errorInfo.sessionId"),
        "user_facing_error_message": text("errorInfo.userFacingErrorMessage"),
    },
    "turnReplayResults",
    "list",
    "turn_index",
    children=(
        _judgement("semantic_similarity", "semanticSimilarityResult"),
        _judgement("hallucination", "hallucinationResult"),
        _invocation_score("toolInvocationScore", "tool_invocation"),
        _invocation_score("toolOrderedInvocationScore", "tool_ordered_invocation"),
        _scores(
            "overall_tool_invocation",
            {"score": double("toolInvocationScore"), "outcome": enum("outcome", OUTCOME)},
            "overallToolInvocationResult",
            when=bool,
        ),
        _outcomes("expectationOutcome"),
        *_LATENCIES,
    ),
)


def _no_turn(scenario: Any, where: str) -> dict[str, Any]:
    return {"turn_index": None}


RESULT_ROWS = Rows(
    EVALUATION_RESULTS,
    RESULT,
    derive=_result_names,
    children=(
        Rows(None, path="goldenResult", when=bool, children=(_TURN_REPLAYS, _EXPECTATION_RESULTS)),
        Rows(
            EVALUATION_SCENARIO_RESULTS,
            {
                "conversation_name": text("conversation"),
                "task": text("task"),
                "user_facts": json("userFacts", v.array),
                "all_expectations_satisfied": boolean("allExpectationsSatisfied"),
                "task_completed": boolean("taskCompleted"),
            },
            "scenarioResult",
            when=bool,
            derive=_no_turn,
            children=(
                _judgement("task_completion", "taskCompletionResult"),
                _judgement("user_goal_satisfaction", "userGoalSatisfactionResult"),
                _judgement("hallucination", "hallucinationResult", "list"),
                _scores(
                    "rubric",
                    {
                        "rubric": text("rubric"),
                        "score": double("score"),
                        "explanation": text("scoreExplanation"),
                    },
                    "rubricOutcomes",
                    "list",
                ),
                _outcomes("expectationOutcomes"),
                *_LATENCIES,
                _EXPECTATION_RESULTS,
            ),
        ),
    ),
)


class EvaluationResultFlattener(FieldFlattener):
    def __init__(self) -> None:
        super().__init__(EVALUATION_RESULT_TABLES, RESULT_ROWS, RESULT_REJECT_SOURCE, "evaluationResult")
