"""Flatten CES `EvaluationResult` JSON into `evaluation_results` and the tables that say why a
result passed or failed: turn replays, scores, expectation outcomes and results, latencies and
scenario verdicts. Every numeric judgement lands in `evaluation_scores` (one row per score,
named by `metric`), so one query compares any metric across runs and app versions."""

from __future__ import annotations

from typing import Any

from pipelines import resource_names
from pipelines.protojson.enums import enum_name
from pipelines.transform import evaluation_messages as messages
from pipelines.transform import values as v
from pipelines.transform.evaluations import error_detail_columns, error_fields, tool_subject
from pipelines.transform.rows import TableBuffers
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
_OBSERVED = (
    ("observedToolCall", "tool_call"),
    ("observedToolResponse", "tool_response"),
    ("observedAgentResponse", "agent_response"),
    ("observedAgentTransfer", "agent_transfer"),
    ("observedPayload", "payload"),
)
_SPAN_SUBJECTS = ("resource", "model", "callback")


class EvaluationResultFlattener(TableBuffers):
    def __init__(self) -> None:
        super().__init__(EVALUATION_RESULT_TABLES, RESULT_REJECT_SOURCE)

    def add(self, result: Any) -> bool:
        return self.flatten(result, self._add)

    def _add(self, result: Any) -> None:
        result = v.message(result, "evaluationResult")
        name = v.text(result.get("name"), "name")
        match = resource_names.EVALUATION_RESULT.fullmatch(name or "")
        if match is None:
            raise v.SchemaViolation(f"name: not an evaluation result resource name: {str(name)[:120]!r}")
        run = v.text(result.get("evaluationRun"), "evaluationRun")
        error_info, status, error_type, error_message = error_fields(result)
        persona = v.message(result.get("persona"), "persona")
        speech = v.message(persona.get("speechConfig"), "persona.speechConfig")
        golden = v.message(result.get("goldenResult"), "goldenResult")
        scenario = v.message(result.get("scenarioResult"), "scenarioResult")
        thresholds = v.message(result.get("evaluationMetricsThresholds"), "evaluationMetricsThresholds")
        self.rows(EVALUATION_RESULTS).append(
            (
                name,
                run,
                match.group(1),
                v.text(result.get("displayName"), "displayName"),
                v.timestamp(result.get("createTime"), "createTime"),
                enum_name(result.get("evaluationStatus"), OUTCOME, "evaluationStatus"),
                enum_name(result.get("executionState"), "EvaluationResult.ExecutionState", "executionState"),
                "golden" if "goldenResult" in result else "scenario" if "scenarioResult" in result else None,
                v.text(persona.get("name"), "persona.name"),
                v.text(result.get("appVersion"), "appVersion"),
                v.text(result.get("initiatedBy"), "initiatedBy"),
                error_type,
                error_message,
                v.text(result.get("appVersionDisplayName"), "appVersionDisplayName"),
                v.text(result.get("changelog"), "changelog"),
                enum_name(result.get("goldenRunMethod"), "GoldenRunMethod", "goldenRunMethod"),
                v.json_text(thresholds, "evaluationMetricsThresholds") if thresholds else None,
                v.timestamp(result.get("changelogCreateTime"), "changelogCreateTime"),
                *error_detail_columns(error_info, status),
                v.json_text(speech, "persona.speechConfig") if speech else None,
            )
        )
        details = _ResultDetails(self, name, run)
        if golden:
            details.golden(golden)
        if scenario:
            details.scenario(scenario)


class _ResultDetails:
    """The detail rows of one result, each list numbered across the whole result."""

    def __init__(self, buffers: TableBuffers, name: str | None, run: str | None):
        self.buffers, self.key = buffers, (name, run)
        self.counts = {EVALUATION_SCORES.name: 0, EVALUATION_EXPECTATION_OUTCOMES.name: 0}
        self.counts |= {EVALUATION_EXPECTATION_RESULTS.name: 0, EVALUATION_RESULT_LATENCIES.name: 0}

    def _append(self, spec: Any, *row: Any) -> None:
        """A row of `spec` numbered after the result's earlier rows of it."""
        index = self.counts[spec.name]
        self.counts[spec.name] = index + 1
        self.buffers.rows(spec).append((*self.key, index, *row))

    def golden(self, golden: dict[str, Any]) -> None:
        for turn, replay in enumerate(v.array(golden.get("turnReplayResults"), "turnReplayResults")):
            label = f"turnReplayResults[{turn}]"
            replay = v.message(replay, label)
            error = v.message(replay.get("errorInfo"), f"{label}.errorInfo")
            self.buffers.rows(EVALUATION_TURN_REPLAYS).append(
                (
                    *self.key,
                    turn,
                    v.text(replay.get("conversation"), f"{label}.conversation"),
                    v.duration(replay.get("turnLatency"), f"{label}.turnLatency"),
                    enum_name(error.get("errorType"), "EvaluationErrorInfo.ErrorType", f"{label}.errorInfo"),
                    v.text(error.get("errorMessage"), f"{label}.errorInfo.errorMessage"),
                    v.text(error.get("sessionId"), f"{label}.errorInfo.sessionId"),
                    v.text(error.get("userFacingErrorMessage"), f"{label}.errorInfo.userFacingErrorMessage"),
                )
            )
            for field, metric in (
                ("semanticSimilarityResult", "semantic_similarity"),
                ("hallucinationResult", "hallucination"),
            ):
                self._judgement(metric, replay.get(field), turn, f"{label}.{field}")
            for field, metric in (
                ("toolInvocationScore", "tool_invocation"),
                ("toolOrderedInvocationScore", "tool_ordered_invocation"),
            ):
                if field in replay:
                    score = v.double(replay[field], f"{label}.{field}")
                    self._append(EVALUATION_SCORES, metric, turn, None, score, None, None, None)
            overall = v.message(
                replay.get("overallToolInvocationResult"), f"{label}.overallToolInvocationResult"
            )
            if overall:
                self._append(
                    EVALUATION_SCORES,
                    "overall_tool_invocation",
                    turn,
                    None,
                    v.double(
                        overall.get("toolInvocationScore"), f"{label}.overallToolInvocationResult.score"
                    ),
                    None,
                    enum_name(
                        overall.get("outcome"), OUTCOME, f"{label}.overallToolInvocationResult.outcome"
                    ),
                    None,
                )
            where = f"{label}.expectationOutcome"
            for index, outcome in enumerate(v.array(replay.get("expectationOutcome"), where)):
                self._expectation_outcome(v.message(outcome, f"{where}[{index}]"), turn, f"{where}[{index}]")
            self._latencies(replay, turn, label)
        self._expectation_results(golden)

    def scenario(self, scenario: dict[str, Any]) -> None:
        facts = v.array(scenario.get("userFacts"), "scenarioResult.userFacts")
        self.buffers.rows(EVALUATION_SCENARIO_RESULTS).append(
            (
                *self.key,
                v.text(scenario.get("conversation"), "scenarioResult.conversation"),
                v.text(scenario.get("task"), "scenarioResult.task"),
                v.json_text(facts, "scenarioResult.userFacts") if facts else None,
                v.boolean(
                    scenario.get("allExpectationsSatisfied"), "scenarioResult.allExpectationsSatisfied"
                ),
                v.boolean(scenario.get("taskCompleted"), "scenarioResult.taskCompleted"),
            )
        )
        label = "scenarioResult"
        for field, metric in (
            ("taskCompletionResult", "task_completion"),
            ("userGoalSatisfactionResult", "user_goal_satisfaction"),
        ):
            self._judgement(metric, scenario.get(field), None, f"{label}.{field}")
        for index, item in enumerate(
            v.array(scenario.get("hallucinationResult"), f"{label}.hallucinationResult")
        ):
            self._judgement("hallucination", item, None, f"{label}.hallucinationResult[{index}]")
        for index, rubric in enumerate(v.array(scenario.get("rubricOutcomes"), f"{label}.rubricOutcomes")):
            where = f"{label}.rubricOutcomes[{index}]"
            rubric = v.message(rubric, where)
            self._append(
                EVALUATION_SCORES,
                "rubric",
                None,
                v.text(rubric.get("rubric"), f"{where}.rubric"),
                v.double(rubric.get("score"), f"{where}.score"),
                None,
                None,
                v.text(rubric.get("scoreExplanation"), f"{where}.scoreExplanation"),
            )
        where = f"{label}.expectationOutcomes"
        for index, outcome in enumerate(v.array(scenario.get("expectationOutcomes"), where)):
            self._expectation_outcome(v.message(outcome, f"{where}[{index}]"), None, f"{where}[{index}]")
        self._latencies(scenario, None, label)
        self._expectation_results(scenario)

    def _judgement(self, metric: str, judgement: Any, turn: int | None, where: str) -> None:
        """A HallucinationResult, SemanticSimilarityResult, TaskCompletionResult or
        UserGoalSatisfactionResult (int32 score) as a score row; none when it is absent."""
        if judgement is None:
            return
        judgement = v.message(judgement, where)
        self._append(
            EVALUATION_SCORES,
            metric,
            turn,
            None,
            float(v.int32(judgement.get("score"), f"{where}.score")),
            v.text(judgement.get("label"), f"{where}.label"),
            enum_name(judgement.get("outcome"), OUTCOME, f"{where}.outcome"),
            v.text(judgement.get("explanation"), f"{where}.explanation"),
        )

    def _expectation_outcome(self, outcome: dict[str, Any], turn: int | None, where: str) -> None:
        """A golden turn's or a scenario's expectation outcome: their fields share names, but a
        scenario's expected tool call sits in `toolExpectation` (with the response it mocks) and
        it has no similarity or tool invocation result. An agent response, expected or observed,
        is kept as proto3 JSON prints it, so that every legal form of it reads the same."""
        expectation = dict(v.message(outcome.get("expectation"), f"{where}.expectation"))
        scenario_tool = v.message(expectation.get("toolExpectation"), f"{where}.expectation.toolExpectation")
        if scenario_tool:
            kind, call_field, parent = "tool_call", "expectedToolCall", scenario_tool
        else:
            kind = next((kind for field, kind in _EXPECTATION_KINDS if field in expectation), None)
            if kind is None and expectation.get("noToolCalls"):
                kind = "no_tool_calls"
            call_field = next((f for f in _TOOL_FIELDS if f in expectation), "toolCall")
            parent = expectation
        call = v.message(parent.get(call_field), f"{where}.expectation.{call_field}")
        expected_response = expectation.get("agentResponse")
        if expected_response is not None:
            expected_response = messages.canonical_message(
                expected_response, f"{where}.expectation.agentResponse"
            )
            expectation["agentResponse"] = expected_response
        observed_field, observed_kind = next(((f, k) for f, k in _OBSERVED if f in outcome), (None, None))
        observed = outcome.get(observed_field) if observed_field else None
        observed_response = None
        if observed_kind == "agent_response":
            observed = observed_response = messages.canonical_message(observed, f"{where}.{observed_field}")
        similarity = v.message(outcome.get("semanticSimilarityResult"), f"{where}.semanticSimilarityResult")
        invocation = v.message(outcome.get("toolInvocationResult"), f"{where}.toolInvocationResult")
        overrides = _Overrides(expectation, f"{where}.expectation")
        self._append(
            EVALUATION_EXPECTATION_OUTCOMES,
            turn,
            kind,
            tool_subject(call, f"{where}.expectation.{call_field}") if call else None,
            v.json_text(expectation, f"{where}.expectation") if expectation else None,
            enum_name(outcome.get("outcome"), OUTCOME, f"{where}.outcome"),
            observed_kind,
            v.json_text(observed, f"{where}.{observed_field}") if observed is not None else None,
            float(v.int32(similarity.get("score"), f"{where}.semanticSimilarityResult.score"))
            if similarity
            else None,
            enum_name(similarity.get("outcome"), OUTCOME, f"{where}.semanticSimilarityResult.outcome"),
            v.double(invocation.get("parameterCorrectnessScore"), f"{where}.parameterCorrectnessScore")
            if invocation
            else None,
            enum_name(invocation.get("outcome"), OUTCOME, f"{where}.toolInvocationResult.outcome"),
            v.text(invocation.get("explanation"), f"{where}.toolInvocationResult.explanation"),
            v.text(expectation.get("note"), f"{where}.expectation.note"),
            v.boolean(expectation.get("skipEvaluation"), f"{where}.expectation.skipEvaluation"),
            enum_name(
                expectation.get("comparisonType"),
                "EvaluationMetricsConfig.ComparisonType",
                f"{where}.expectation.comparisonType",
            ),
            overrides.parameter_correctness_threshold,
            overrides.semantic_similarity_enabled,
            overrides.hallucination_enabled,
            v.text(similarity.get("label"), f"{where}.semanticSimilarityResult.label"),
            v.text(similarity.get("explanation"), f"{where}.semanticSimilarityResult.explanation"),
            messages.said(expected_response),
            messages.said(observed_response),
            v.timestamp(observed_response.get("eventTime"), f"{where}.{observed_field}.eventTime")
            if observed_response
            else None,
            messages.observed_tool(observed, f"{where}.{observed_field}")
            if observed_kind in ("tool_call", "tool_response")
            else None,
            messages.transfer_target(
                expectation.get("agentTransfer"), expected_response, f"{where}.expectation"
            ),
            messages.transfer_target(
                outcome.get("observedAgentTransfer"), observed_response, f"{where}.observed"
            ),
        )

    def _latencies(self, parent: dict[str, Any], turn: int | None, label: str) -> None:
        for index, entry in enumerate(v.array(parent.get("toolCallLatencies"), f"{label}.toolCallLatencies")):
            where = f"{label}.toolCallLatencies[{index}]"
            entry = v.message(entry, where)
            self._latency(entry, turn, "tool_call", None, v.text(entry.get("tool"), f"{where}.tool"), where)
        for index, entry in enumerate(v.array(parent.get("spanLatencies"), f"{label}.spanLatencies")):
            where = f"{label}.spanLatencies[{index}]"
            entry = v.message(entry, where)
            toolset = v.message(entry.get("toolset"), f"{where}.toolset")
            subject = next((entry[f] for f in _SPAN_SUBJECTS if entry.get(f)), None)
            if subject is None and toolset:
                subject = tool_subject({"toolsetTool": toolset}, where)
            span_type = enum_name(entry.get("type"), "EvaluationResult.SpanLatency.Type", f"{where}.type")
            self._latency(entry, turn, "span", span_type, v.text(subject, f"{where}.subject"), where)

    def _latency(
        self,
        entry: dict[str, Any],
        turn: int | None,
        kind: str,
        span_type: str | None,
        subject: Any,
        where: str,
    ) -> None:
        self._append(
            EVALUATION_RESULT_LATENCIES,
            turn,
            kind,
            span_type,
            subject,
            v.text(entry.get("displayName"), f"{where}.displayName"),
            v.timestamp(entry.get("startTime"), f"{where}.startTime"),
            v.timestamp(entry.get("endTime"), f"{where}.endTime"),
            v.duration(entry.get("executionLatency"), f"{where}.executionLatency"),
        )

    def _expectation_results(self, parent: dict[str, Any]) -> None:
        field = "evaluationExpectationResults"
        for index, item in enumerate(v.array(parent.get(field), field)):
            where = f"{field}[{index}]"
            item = v.message(item, where)
            self._append(
                EVALUATION_EXPECTATION_RESULTS,
                v.text(item.get("evaluationExpectation"), f"{where}.evaluationExpectation"),
                v.text(item.get("prompt"), f"{where}.prompt"),
                enum_name(item.get("outcome"), OUTCOME, f"{where}.outcome"),
                v.text(item.get("explanation"), f"{where}.explanation"),
            )


_TOOL_FIELDS = ("toolCall", "toolResponse", "mockToolResponse")
"""The fields of a golden expectation that name a tool (`expected_tool`)."""


class _Overrides:
    """The metric overrides of a golden expectation. A config message set without its flag
    switches its metric off (False); NULL where the expectation overrides nothing."""

    def __init__(self, expectation: dict[str, Any], where: str):
        threshold = v.message(
            expectation.get("expectationLevelMetricsThresholdsOverride"),
            f"{where}.expectationLevelMetricsThresholdsOverride",
        )
        field = "toolInvocationParameterCorrectnessThreshold"
        self.parameter_correctness_threshold = (
            v.double(threshold.get(field), f"{where}.expectationLevelMetricsThresholdsOverride.{field}")
            if field in threshold
            else None
        )
        self.semantic_similarity_enabled = self._flag(
            expectation,
            "agentResponseSemanticSimilarityMetricsConfigOverride",
            "enableSemanticSimilarityMetrics",
            where,
        )
        self.hallucination_enabled = self._flag(
            expectation,
            "agentResponseHallucinationMetricsConfigOverride",
            "enableHallucinationMetrics",
            where,
        )

    @staticmethod
    def _flag(expectation: dict[str, Any], field: str, flag: str, where: str) -> bool | None:
        config = expectation.get(field)
        if config is None:
            return None
        return v.boolean(v.message(config, f"{where}.{field}").get(flag), f"{where}.{field}.{flag}")
