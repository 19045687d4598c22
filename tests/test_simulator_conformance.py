"""Everything the simulator serves parses strictly as the published google-cloud-ces protos.

One crawl over real HTTP pages through every conversation of a small scale (hydrating summaries),
every evaluation run, result and operation; each object must parse with unknown fields refused
and re-serialise to exactly the JSON that was served.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from google.cloud.ces_v1beta import RunEvaluationOperationMetadata
from simulator_fixtures import (
    McpHttp,
    parse_conversation,
    parse_evaluation_result,
    parse_evaluation_run,
    parse_operation,
    strip_unpublished,
)

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.corpus.catalog import app_catalog
from pipelines.ces.simulator.corpus.evaluation_json import evaluation_results_json, evaluation_run_json
from pipelines.ces.simulator.corpus.evaluations import RUN_STEPS, seeded_runs
from pipelines.protojson.enums import ENUMS
from pipelines.protojson.timeparse import parse_duration_seconds, parse_timestamp_micros

SCALE = SimulatorScale(seed=11, apps=2, days=2, conversations_per_day=40, evaluation_runs_per_app=6)
CHUNK_KINDS = {
    "text",
    "transcript",
    "blob",
    "payload",
    "image",
    "toolCall",
    "toolResponse",
    "agentTransfer",
    "updatedVariables",
    "defaultVariables",
}


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[McpHttp, tuple[str, ...]]]:
    with running_simulator(SimulatorConfig(scale=SCALE)) as handle:
        caller = McpHttp(handle.url)
        yield caller, handle.apps
        caller.close()


@pytest.fixture(scope="module")
def conversations(served: tuple[McpHttp, tuple[str, ...]]) -> list[dict[str, Any]]:
    """Every conversation of every app, hydrated with get_conversation where the listing summarised it."""
    caller, apps = served
    out = []
    for app in apps:
        for listed in caller.all_items("list_conversations", "conversations", parent=app, pageSize=50):
            if listed.get("turnCount") and not listed.get("turns"):
                full = caller.call("get_conversation", name=listed["name"])
                assert {k: v for k, v in full.items() if k not in ("turns", "messages")} == listed
                listed = full
            out.append(listed)
    return out


def test_every_conversation_is_listed_once(conversations: list[dict[str, Any]]) -> None:
    names = [c["name"] for c in conversations]
    assert len(names) == len(set(names)) == SCALE.conversation_count


def test_conversations_parse_strictly_apart_from_the_five_unpublished_fields(
    conversations: list[dict[str, Any]],
) -> None:
    removed: Counter[str] = Counter()
    for conversation in conversations:
        stripped, counts = strip_unpublished(conversation)
        removed += counts
        parse_conversation(stripped)
    # The allowance must not be vacuous: each documented-but-unpublished field is really emitted.
    assert set(removed) == {
        "toolCall.parentToolCallId",
        "toolCall.agentName",
        "toolCall.targetApp",
        "toolResponse.parentToolCallId",
        "toolResponse.agentName",
        "toolResponse.targetApp",
        "image.altText",
        "turn.userIntendedText",
    }


def _chunks(conversation: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The chunks of the turns, or of the deprecated top-level messages when there are no turns
    (when both exist the top-level messages repeat the turns' messages)."""
    turns = conversation.get("turns")
    messages = [m for t in turns for m in t["messages"]] if turns else conversation.get("messages", [])
    for message in messages:
        yield from message["chunks"]


def test_corpus_covers_every_chunk_kind_source_and_shape(conversations: list[dict[str, Any]]) -> None:
    kinds = Counter(kind for c in conversations for chunk in _chunks(c) for kind in chunk)
    assert set(kinds) == CHUNK_KINDS
    assert {c["source"] for c in conversations} == {"LIVE", "SIMULATOR", "EVAL", "AGENT_TOOL"}
    assert Counter(c["source"] for c in conversations).most_common(1)[0][0] == "LIVE"
    assert any("channelType" in c for c in conversations) and any(
        "channelType" not in c for c in conversations
    )
    assert any("messages" in c and "turns" in c for c in conversations)
    assert any("messages" in c and "turns" not in c and "turnCount" not in c for c in conversations)
    assert len({c["languageCode"] for c in conversations}) >= 4
    assert {"INPUT_TYPE_TEXT", "INPUT_TYPE_AUDIO", "INPUT_TYPE_IMAGE"} <= {
        t for c in conversations for t in c["inputTypes"]
    }
    fractions = {
        len(c["startTime"].rpartition(".")[2]) if "." in c["startTime"] else 0 for c in conversations
    }
    assert fractions == {0, 4, 7, 10}  # 0, 3, 6 and 9 digits plus the "Z"
    failures = [
        chunk["toolResponse"]["response"]
        for c in conversations
        for chunk in _chunks(c)
        if "toolResponse" in chunk
    ]
    assert 0.03 < sum("error" in r for r in failures) / len(failures) < 0.2
    assert all(("output" in r) != ("error" in r) for r in failures)


def test_open_conversations_only_near_the_end_of_the_window(conversations: list[dict[str, Any]]) -> None:
    window_end = parse_timestamp_micros(f"{SCALE.end_date.isoformat()}T00:00:00Z")
    open_ones = [c for c in conversations if "endTime" not in c]
    assert open_ones
    assert all(window_end - parse_timestamp_micros(c["startTime"]) < 6 * 3600 * 10**6 for c in open_ones)


def _walk(span: dict[str, Any], depth: int = 1) -> Iterator[tuple[dict[str, Any], int]]:
    yield span, depth
    for child in span.get("childSpans", []):
        yield from _walk(child, depth + 1)


def test_span_trees_are_consistent_and_match_the_tool_calls(conversations: list[dict[str, Any]]) -> None:
    span_names: Counter[str] = Counter()
    spans_per_turn = []
    for conversation in conversations:
        calls = [chunk["toolCall"] for chunk in _chunks(conversation) if "toolCall" in chunk]
        responses = [chunk["toolResponse"] for chunk in _chunks(conversation) if "toolResponse" in chunk]
        assert sorted(call["id"] for call in calls) == sorted(response["id"] for response in responses)
        assert len({call["id"] for call in calls}) == len(calls)
        for turn in conversation.get("turns", []):
            root = turn["rootSpan"]
            assert {"perceived latency (ms)", "input types"} <= set(root["attributes"])
            spans = list(_walk(root))
            spans_per_turn.append(len(spans))
            for span, depth in spans:
                span_names[span["name"].partition(":")[0] + (":" if ":" in span["name"] else "")] += 1
                assert depth <= SCALE.span_depth
                start, end = (
                    parse_timestamp_micros(span["startTime"]),
                    parse_timestamp_micros(span["endTime"]),
                )
                assert abs(parse_duration_seconds(span["duration"]) * 1e6 - (end - start)) <= 1
                for child in span.get("childSpans", []):
                    assert start <= parse_timestamp_micros(child["startTime"])
                    assert parse_timestamp_micros(child["endTime"]) <= end
            turn_calls = sorted(
                c["toolCall"]["displayName"] for m in turn["messages"] for c in m["chunks"] if "toolCall" in c
            )
            tool_spans = sorted(span["attributes"]["name"] for span, _ in spans if span["name"] == "Tool")
            assert tool_spans == turn_calls
            for message in turn["messages"]:
                assert root["startTime"] <= message["eventTime"] <= root["endTime"]
    assert {"Turn", "LLM", "Tool", "Callback", "Guardrail", "TTS", "VAD", "TOOL:", "AGENT:"} <= set(
        span_names
    )
    assert 5 <= sum(spans_per_turn) / len(spans_per_turn) <= 9


@pytest.fixture(scope="module")
def evaluation_runs(served: tuple[McpHttp, tuple[str, ...]]) -> list[dict[str, Any]]:
    caller, apps = served
    return [
        run for app in apps for run in caller.all_items("list_evaluation_runs", "evaluationRuns", parent=app)
    ]


def test_evaluation_runs_parse_strictly_and_cover_every_state_and_type(
    evaluation_runs: list[dict[str, Any]],
) -> None:
    assert len(evaluation_runs) == SCALE.apps * SCALE.evaluation_runs_per_app
    for run in evaluation_runs:
        parse_evaluation_run(run)
    assert {r["state"] for r in evaluation_runs} == {"QUEUED", "RUNNING", "COMPLETED", "ERROR", "CANCELLED"}
    assert {r["evaluationType"] for r in evaluation_runs} == {"GOLDEN", "SCENARIO", "MIXED"}
    errors = [r for r in evaluation_runs if r["state"] == "ERROR"]
    assert any("errorInfo" in r for r in errors) and any(
        "error" in r and "errorInfo" not in r for r in errors
    )
    assert any("evaluationDataset" in r for r in evaluation_runs) and any(
        "evaluations" in r for r in evaluation_runs
    )
    assert any("personaRunConfigs" in r for r in evaluation_runs)
    assert any(
        r["config"].get("evaluationChannel") == "AUDIO" and "inputAudioConfig" in r["config"]
        for r in evaluation_runs
    )


def test_evaluation_run_counts_are_consistent(evaluation_runs: list[dict[str, Any]]) -> None:
    tool_forms = set()
    for run in evaluation_runs:
        assert ("evaluations" in run) != ("evaluationDataset" in run)
        progress = run["progress"]
        summaries = run.get("evaluationRunSummaries", {}).values()
        for field in ("passedCount", "failedCount", "errorCount"):
            assert sum(s.get(field, 0) for s in summaries) == progress.get(field, 0), run["name"]
        assert progress.get("completedCount", 0) == progress.get("passedCount", 0) + progress.get(
            "failedCount", 0
        )
        finished = sum(progress.get(f, 0) for f in ("completedCount", "errorCount", "cancelledCount"))
        assert finished <= progress["totalCount"]
        if run["state"] in ("COMPLETED", "ERROR", "CANCELLED"):
            assert finished == progress["totalCount"]
        report = run.get("latencyReport")
        if run["state"] == "QUEUED":
            assert finished == 0
        if finished == 0:  # nothing finished yet, nothing measured yet
            assert report is None
            continue
        for kind in ("toolLatencies", "callbackLatencies", "guardrailLatencies", "llmCallLatencies"):
            for entry in report[kind]:
                metrics = entry["latencyMetrics"]
                p50, p90, p99 = (parse_duration_seconds(metrics[f"p{q}Latency"]) for q in (50, 90, 99))
                assert 0 < p50 <= p90 <= p99 and metrics["callCount"] > 0
                tool_forms.update(form for form in ("tool", "toolsetTool") if form in entry)
        assert report["sessionCount"] > 0
    assert tool_forms == {"tool", "toolsetTool"}


def test_evaluation_results_parse_strictly_and_agree_with_their_runs(
    served: tuple[McpHttp, tuple[str, ...]], evaluation_runs: list[dict[str, Any]]
) -> None:
    caller, apps = served
    results = [
        r
        for app in apps
        for r in caller.all_items(
            "list_evaluation_results", "evaluationResults", parent=f"{app}/evaluations/-"
        )
    ]
    assert results
    by_run: dict[str, Counter[str]] = {}
    for result in results:
        parse_evaluation_result(result)
        by_run.setdefault(result["evaluationRun"], Counter())[
            f"{result['executionState']}/{result.get('evaluationStatus', '')}"
        ] += 1
    assert {key.split("/")[0] for counts in by_run.values() for key in counts} >= {
        "RUNNING",
        "COMPLETED",
        "ERROR",
    }
    assert {key.split("/")[1] for counts in by_run.values() for key in counts} >= {"PASS", "FAIL", "SKIPPED"}
    for run in evaluation_runs:
        counts, progress = by_run.get(run["name"], Counter()), run["progress"]
        assert counts["COMPLETED/PASS"] == progress.get("passedCount", 0)
        assert counts["COMPLETED/FAIL"] == progress.get("failedCount", 0)
        assert counts["ERROR/"] == progress.get("errorCount", 0)
        assert counts["CANCELLED/SKIPPED"] == progress.get("cancelledCount", 0)
        assert sorted(run.get("evaluationResults", [])) == sorted(
            r["name"] for r in results if r["evaluationRun"] == run["name"]
        )


def test_operations_of_runs_parse_as_long_running_operations(
    served: tuple[McpHttp, tuple[str, ...]], evaluation_runs: list[dict[str, Any]]
) -> None:
    caller, _ = served
    finals = {"COMPLETED": 0, "ERROR": 13, "CANCELLED": 1}  # the error Status code, 0: a response
    for run in evaluation_runs:
        operation = parse_operation(caller.call("get_operation", name=run["operation"]))
        assert operation.metadata.type_url.endswith("RunEvaluationOperationMetadata")
        metadata = RunEvaluationOperationMetadata.deserialize(operation.metadata.value)
        assert metadata.evaluation_run == run["name"]
        assert operation.done == (run["state"] in finals) == bool(metadata.end_time)
        if operation.done:
            assert operation.error.code == finals[run["state"]]
            completed = run["state"] == "COMPLETED"
            assert operation.response.type_url.endswith("RunEvaluationResponse") == completed
            assert metadata.end_time > metadata.create_time
            assert metadata.cancel_requested == (run["state"] == "CANCELLED")


def _values(objects: list[dict[str, Any]], path: str) -> set[Any]:
    """Every value at dotted `path` (lists transparent); None where an object lacks it."""
    found: set[Any] = set()

    def walk(value: Any, parts: list[str]) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item, parts)
        elif not parts:
            found.add(value)
        elif isinstance(value, dict):
            walk(value.get(parts[0]), parts[1:])
        elif value is None:
            found.add(None)

    for obj in objects:
        walk(obj, path.split("."))
    return found


def test_evaluation_results_name_eval_conversations_the_server_serves_with_traces(
    served: tuple[McpHttp, tuple[str, ...]],
) -> None:
    """The drill-down's premise: each completed result's conversation is an EVAL conversation
    that `list_conversations` (source EVAL) lists and `get_conversation` serves, traces included."""
    caller, apps = served
    for app in apps:
        results = caller.all_items(
            "list_evaluation_results", "evaluationResults", parent=f"{app}/evaluations/-"
        )
        named = {
            conversation
            for result in results
            for conversation in [result.get("scenarioResult", {}).get("conversation")]
            + [t["conversation"] for t in result.get("goldenResult", {}).get("turnReplayResults", [])]
            if conversation
        }
        assert named, f"no result of {app} names a conversation"
        listed = {
            c["name"]
            for c in caller.all_items(
                "list_conversations", "conversations", parent=app, source="EVAL", pageSize=50
            )
        }
        assert named <= listed
        for name in sorted(named)[:3]:
            conversation = caller.call("get_conversation", name=name)
            assert conversation["source"] == "EVAL"
            assert any("rootSpan" in turn for turn in conversation["turns"])


def test_corpus_uses_every_documented_enum_value(conversations: list[dict[str, Any]]) -> None:
    """Every value of the enums the warehouse keeps, `*_UNSPECIFIED` as proto3 JSON writes it
    (left out), and roles beyond user and agent: the conversations served, and many evaluation
    runs and their results viewed at every step of their progress."""
    scale = SimulatorScale(seed=5, apps=2, days=1, conversations_per_day=1, evaluation_runs_per_app=40)
    runs, results = [], []
    for app in range(scale.apps):
        catalog = app_catalog(scale, app)
        for plan in seeded_runs(scale, app):
            for step in range(RUN_STEPS + 1):
                run = evaluation_run_json(plan, step, catalog)
                parse_evaluation_run(run)
                runs.append(run)
                results.extend(evaluation_results_json(plan, step, catalog))
    for result in results:
        parse_evaluation_result(result)
    named = {enum: set(names[1:]) for enum, names in ENUMS.items()}
    messages = [m for c in conversations for t in c.get("turns", []) for m in t["messages"]]
    assert _values(conversations, "inputTypes") == named["Conversation.InputType"]
    assert _values(conversations, "channelType") == named["Conversation.ChannelType"] | {None}
    assert _values(messages, "role") == {"user", "agent", "system"}
    assert _values(runs, "state") == named["EvaluationRun.EvaluationRunState"]
    assert _values(results, "executionState") == named["EvaluationResult.ExecutionState"]
    errors = [info for obj in (*runs, *results) if (info := obj.get("errorInfo"))]
    assert _values(errors, "errorType") == named["EvaluationErrorInfo.ErrorType"] | {None}
    optimizations = [o for run in runs if (o := run.get("optimizationConfig"))]
    assert _values(optimizations, "status") == named["OptimizationConfig.OptimizationStatus"] | {None}
    assert _values(runs, "config.outputAudioConfig.audioEncoding") >= {"MULAW", "ALAW"}
    assert _values(results, "evaluationStatus") == named["EvaluationResult.Outcome"] | {None}
    outcomes = named["EvaluationResult.Outcome"]
    turns = [t for r in results for t in r.get("goldenResult", {}).get("turnReplayResults", [])]
    scenarios = [r["scenarioResult"] for r in results if "scenarioResult" in r]
    assert _values(turns, "expectationOutcome.outcome") == outcomes
    assert _values(turns, "semanticSimilarityResult.outcome") == {"PASS", "FAIL"}
    comparisons = _values(turns, "expectationOutcome.expectation.comparisonType") - {None}
    assert comparisons == named["EvaluationMetricsConfig.ComparisonType"]
    assert _values(turns, "overallToolInvocationResult.outcome") == {"PASS", "FAIL"}
    assert _values(scenarios, "expectationOutcomes.outcome") == {"PASS", "FAIL"}
    details = [
        r.get("goldenResult") or r["scenarioResult"] for r in results if r["executionState"] == "COMPLETED"
    ]
    assert _values(details, "evaluationExpectationResults.outcome") == {"PASS", "FAIL"}
    span_types = _values(turns, "spanLatencies.type") | _values(scenarios, "spanLatencies.type")
    assert span_types == named["EvaluationResult.SpanLatency.Type"] | {None}
    assert {"errorType": "METRIC_CALCULATION_FAILURE"}.items() <= next(
        t["errorInfo"] for t in turns if "errorInfo" in t
    ).items()
    thresholds = [r["evaluationMetricsThresholds"] for r in results if "evaluationMetricsThresholds" in r]
    behaviours = {"ENABLED", "DISABLED", None}  # HALLUCINATION_METRIC_BEHAVIOR_UNSPECIFIED left out
    for field in ("hallucination", "goldenHallucination", "scenarioHallucination"):
        assert _values(thresholds, f"{field}MetricBehavior") == behaviours
    golden_thresholds = "goldenEvaluationMetricsThresholds.toolMatchingSettings.extraToolCallBehavior"
    assert _values(thresholds, golden_thresholds) == {"FAIL", "ALLOW"}


@pytest.fixture(scope="module")
def evaluation_results(served: tuple[McpHttp, tuple[str, ...]]) -> list[dict[str, Any]]:
    caller, apps = served
    return [
        result
        for app in apps
        for result in caller.all_items(
            "list_evaluation_results", "evaluationResults", parent=f"{app}/evaluations/-"
        )
    ]


def _golden_outcomes(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        outcome
        for result in results
        for turn in result.get("goldenResult", {}).get("turnReplayResults", [])
        for outcome in turn["expectationOutcome"]
    ]


def test_expectation_outcomes_agree_with_what_was_observed(evaluation_results: list[dict[str, Any]]) -> None:
    """Every golden expectation kind is checked, and each outcome says what its observation shows."""
    outcomes = _golden_outcomes(evaluation_results)
    kinds = {key for outcome in outcomes for key in outcome.get("expectation", {"payload": 1})}
    assert {
        "toolCall",
        "toolResponse",
        "mockToolResponse",
        "agentResponse",
        "agentTransfer",
        "updatedVariables",
        "noToolCalls",
        "note",
        "skipEvaluation",
        "comparisonType",
        "payload",  # an observed custom payload: no expectation
    } <= kinds
    for outcome in outcomes:
        expectation = outcome.get("expectation", {})
        if (
            "observedPayload" in outcome
            or "mockToolResponse" in expectation
            or expectation.get("skipEvaluation")
        ):
            assert outcome["outcome"] == "SKIPPED", outcome
        if "toolResponse" in expectation:
            same = outcome["observedToolResponse"]["response"] == expectation["toolResponse"]["response"]
            assert (outcome["outcome"] == "PASS") == same
        if "agentTransfer" in expectation:
            observed = outcome.get("observedAgentTransfer", {}).get("targetAgent")
            assert (outcome["outcome"] == "PASS") == (observed == expectation["agentTransfer"]["targetAgent"])
        if "noToolCalls" in expectation:
            assert (outcome["outcome"] == "PASS") == ("observedToolCall" not in outcome)
        if expectation.get("comparisonType") in ("EQUALS", "CONTAINS"):
            assert "semanticSimilarityResult" not in outcome
        if "observedAgentResponse" in outcome and outcome["outcome"] == "PASS":
            said = [c.get("text") or c.get("transcript") for c in outcome["observedAgentResponse"]["chunks"]]
            assert expectation["agentResponse"]["chunks"][0] in [{"text": s} for s in said] + [
                {"transcript": s} for s in said
            ]
    scenarios = [r["scenarioResult"] for r in evaluation_results if "scenarioResult" in r]
    for scenario in scenarios:
        for outcome in scenario["expectationOutcomes"]:
            tool = outcome["expectation"].get("toolExpectation")
            if tool:  # both are required
                assert {"expectedToolCall", "mockToolResponse"} <= set(tool)
                if "observedToolCall" in outcome:
                    assert outcome["observedToolCall"]["toolResponse"] == tool["mockToolResponse"]
            else:
                assert "observedAgentResponse" in outcome
        assert scenario["allExpectationsSatisfied"] == all(
            o["outcome"] == "PASS" for o in scenario["expectationOutcomes"]
        )


def test_errored_results_say_why_and_results_carry_their_versions_changelog(
    evaluation_runs: list[dict[str, Any]], evaluation_results: list[dict[str, Any]]
) -> None:
    errored = [r for r in evaluation_results if r["executionState"] == "ERROR"]
    assert errored and all("userFacingErrorMessage" in r["errorInfo"] for r in errored)
    for result in errored:  # the deprecated Status, where sent, says the same
        if "error" in result:
            assert result["error"]["message"] == result["errorInfo"]["errorMessage"]
    assert all(r["executionState"] == "ERROR" for r in evaluation_results if "error" in r or "errorInfo" in r)
    runs = {run["name"]: run for run in evaluation_runs}
    changed = [r for r in evaluation_results if "changelog" in runs[r["evaluationRun"]]]
    assert changed
    for result in evaluation_results:
        run = runs[result["evaluationRun"]]
        assert (result.get("changelog"), result.get("changelogCreateTime")) == (
            run.get("changelog"),
            run.get("changelogCreateTime"),
        )
    voices = [
        r["persona"]["speechConfig"] for r in evaluation_results if "speechConfig" in r.get("persona", {})
    ]
    assert voices and all(0.5 <= v["speakingRate"] <= 2 and v["voiceId"] for v in voices)
