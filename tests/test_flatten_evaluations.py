"""Flattening EvaluationRun and EvaluationResult JSON: exact values, errors, rejects."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from conversation_samples import APP

from pipelines.transform.evaluation_results import EvaluationResultFlattener
from pipelines.transform.evaluations import (
    EvaluationOperationFlattener,
    EvaluationRunFlattener,
)
from pipelines.transform.schemas import EVALUATION_RUN_SNAPSHOTS, EVALUATION_RUN_TABLES

RUN = f"{APP}/evaluationRuns/run-1"


def completed_run() -> dict:
    return {
        "name": RUN,
        "displayName": "nightly",
        "createTime": "2026-11-02T03:00:00.5Z",
        "initiatedBy": "ops@example.com",
        "appVersion": f"{APP}/versions/7",
        "appVersionDisplayName": "v7",
        "evaluations": [f"{APP}/evaluations/e1", f"{APP}/evaluations/e2"],
        "evaluationResults": [f"{APP}/evaluations/e1/results/r1"],
        "evaluationType": "GOLDEN",
        "state": "COMPLETED",
        "progress": {
            "totalCount": 10,
            "passedCount": 6,
            "failedCount": 3,
            "errorCount": 1,
            "completedCount": 9,
        },
        "config": {"evaluationChannel": "TEXT", "toolCallBehaviour": "FAKE"},
        "evaluationRunSummaries": {
            f"{APP}/evaluations/e1": {"passedCount": 4, "failedCount": 1},
            f"{APP}/evaluations/e2": {"passedCount": 2, "failedCount": 2, "errorCount": 1},
        },
        "latencyReport": {
            "toolLatencies": [
                {
                    "tool": f"{APP}/tools/lookup",
                    "toolDisplayName": "Lookup",
                    "latencyMetrics": {
                        "p50Latency": "0.1s",
                        "p90Latency": "0.5s",
                        "p99Latency": "1.25s",
                        "callCount": 40,
                    },
                },
                {
                    "toolsetTool": {"toolset": f"{APP}/toolsets/crm", "toolId": "get_customer"},
                    "latencyMetrics": {"p50Latency": "0.2s", "callCount": 3},
                },
            ],
            "callbackLatencies": [{"stage": "beforeModel", "latencyMetrics": {"p50Latency": "0.001s"}}],
            "guardrailLatencies": [
                {"guardrail": f"{APP}/guardrails/pii", "guardrailDisplayName": "PII", "latencyMetrics": {}}
            ],
            "llmCallLatencies": [
                {"model": "gemini-2.5-flash", "latencyMetrics": {"p99Latency": "3s", "callCount": "12"}}
            ],
            "sessionCount": 10,
        },
        "runCount": 1,
        "personaRunConfigs": [
            {"persona": f"{APP}/evaluationPersonas/angry", "taskCount": 5},
            {"taskCount": 2},
        ],
        "goldenRunMethod": "STABLE",
        "operation": "projects/p1/locations/us/operations/op-1",
    }


def flatten(runs: list) -> tuple[dict, list]:
    flattener = EvaluationRunFlattener()
    for run in runs:
        flattener.add(run, 0)
    return {k: b.to_pylist() for k, b in flattener.take_batches().items()}, flattener.take_rejects()


def test_every_run_table_has_its_schema() -> None:
    flattener = EvaluationRunFlattener()
    assert flattener.add(completed_run(), 0)
    batches = flattener.take_batches()
    for spec in (*EVALUATION_RUN_TABLES, EVALUATION_RUN_SNAPSHOTS):
        assert batches[spec.name].schema == spec.schema


def test_run_row() -> None:
    tables, rejects = flatten([completed_run()])
    assert rejects == []
    (row,) = tables["evaluation_runs"]
    assert row["evaluation_run_name"] == RUN and row["app"] == APP and row["evaluation_run_id"] == "run-1"
    assert row["create_time"] == datetime(2026, 11, 2, 3, 0, 0, 500000, tzinfo=UTC)
    assert (row["state"], row["evaluation_type"], row["golden_run_method"]) == (
        "COMPLETED",
        "GOLDEN",
        "STABLE",
    )
    counts = [
        row[k] for k in ("total_count", "passed_count", "failed_count", "error_count", "completed_count")
    ]
    assert counts == [10, 6, 3, 1, 9]
    assert row["cancelled_count"] == 0
    assert (row["evaluation_channel"], row["tool_call_behaviour"]) == ("TEXT", "FAKE")
    assert row["latency_session_count"] == 10 and row["run_count"] == 1
    assert row["error_type"] is None and row["error_message"] is None
    assert tables["evaluation_run_errors"] == []


def test_summaries_latencies_personas_and_lists() -> None:
    tables, _ = flatten([completed_run()])
    assert [
        (s["evaluation_name"][-2:], s["passed_count"], s["failed_count"], s["error_count"])
        for s in tables["evaluation_run_summaries"]
    ] == [("e1", 4, 1, 0), ("e2", 2, 2, 1)]
    latencies = [
        (
            r["kind"],
            r["subject"],
            r["display_name"],
            r["p50_seconds"],
            r["p90_seconds"],
            r["p99_seconds"],
            r["call_count"],
        )
        for r in tables["evaluation_run_latencies"]
    ]
    assert latencies == [
        ("tool", f"{APP}/tools/lookup", "Lookup", 0.1, 0.5, 1.25, 40),
        ("tool", f"{APP}/toolsets/crm/get_customer", None, 0.2, None, None, 3),
        ("callback", "beforeModel", None, 0.001, None, None, 0),
        ("guardrail", f"{APP}/guardrails/pii", "PII", None, None, None, 0),
        ("llm_call", "gemini-2.5-flash", None, None, None, 3.0, 12),
    ]
    assert [
        (p["persona_index"], p["persona"], p["task_count"]) for p in tables["evaluation_run_personas"]
    ] == [
        (0, f"{APP}/evaluationPersonas/angry", 5),
        (1, None, 2),
    ]
    assert [e["evaluation_name"] for e in tables["evaluation_run_evaluations"]] == completed_run()[
        "evaluations"
    ]
    assert [r["evaluation_result_name"] for r in tables["evaluation_run_results"]] == [
        f"{APP}/evaluations/e1/results/r1"
    ]


def test_error_info_wins_over_the_deprecated_status() -> None:
    both = dict(
        completed_run(),
        state="ERROR",
        errorInfo={"errorType": "QUOTA_EXHAUSTED", "errorMessage": "quota", "sessionId": "s-1"},
        error={"code": 8, "message": "RESOURCE_EXHAUSTED", "details": [{"@type": "t/x", "a": 1}]},
    )
    status_only = dict(
        completed_run(), name=f"{APP}/evaluationRuns/run-2", error={"code": 13, "message": "internal"}
    )
    tables, _ = flatten([both, status_only])
    runs = tables["evaluation_runs"]
    assert [(r["error_type"], r["error_message"]) for r in runs] == [
        ("QUOTA_EXHAUSTED", "quota"),
        (None, "internal"),
    ]
    errors = tables["evaluation_run_errors"]
    assert [(e["error_type"], e["session_id"], e["status_code"], e["status_message"]) for e in errors] == [
        ("QUOTA_EXHAUSTED", "s-1", 8, "RESOURCE_EXHAUSTED"),
        (None, None, 13, "internal"),
    ]
    assert json.loads(errors[0]["status_details"]) == [{"@type": "t/x", "a": 1}]


def test_bad_runs_are_rejected_and_the_rest_load() -> None:
    bad_duration = completed_run()
    bad_duration["name"] = f"{APP}/evaluationRuns/bad"
    bad_duration["latencyReport"]["toolLatencies"][0]["latencyMetrics"]["p50Latency"] = "fast"
    tables, rejects = flatten([bad_duration, completed_run(), {"name": "nope"}])
    assert [r["evaluation_run_name"] for r in tables["evaluation_runs"]] == [RUN]
    assert {r["evaluation_run_name"] for r in tables["evaluation_run_latencies"]} == {RUN}
    assert [(r.resource_name, r.source) for r in rejects] == [
        (f"{APP}/evaluationRuns/bad", "evaluation_run"),
        ("nope", "evaluation_run"),
    ]
    assert "p50Latency" in rejects[0].reason


def test_a_run_flattened_has_a_snapshot_of_its_progress_when_observed_and_a_rejected_run_none() -> None:
    flattener = EvaluationRunFlattener()
    assert flattener.add(completed_run(), 1_700_000_000_000_000)
    assert not flattener.add({**completed_run(), "createTime": "yesterday"}, 1_700_000_000_000_001)
    batch = flattener.take_batches()[EVALUATION_RUN_SNAPSHOTS.name]
    assert batch.schema == EVALUATION_RUN_SNAPSHOTS.schema
    (row,) = batch.to_pylist()
    assert row["evaluation_run_name"] == completed_run()["name"] and row["observed_at"].year == 2023
    assert row["state"] == "COMPLETED" and row["passed_count"] == 6


OPERATION = "projects/p/locations/us/operations/op-1"


def run_operation(**changes: object) -> dict:
    """google.longrunning.Operation of run_evaluation, done, as get_operation returns it."""
    operation = {
        "name": OPERATION,
        "metadata": {
            "@type": "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationOperationMetadata",
            "evaluations": [f"{APP}/evaluations/e1"],
            "evaluationRun": RUN,
            "createTime": "2026-11-02T03:00:00.5Z",
            "endTime": "2026-11-02T03:42:10.25Z",
            "verb": "create",
        },
        "done": True,
        "response": {"@type": "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationResponse"},
    }
    operation.update(changes)
    return operation


def test_operations_keep_their_times_and_error_and_bad_ones_are_rejected() -> None:
    flattener = EvaluationOperationFlattener()
    cancelled = run_operation(error={"code": 1, "message": "cancelled by ops"})
    cancelled["metadata"] = dict(cancelled["metadata"], cancelRequested=True)
    del cancelled["response"]
    running = run_operation(done=None, response=None)
    del running["metadata"]["endTime"]
    unnamed = run_operation(name="projects/p/locations/us/operations/op-2", metadata={}, response={})
    late = run_operation(name="projects/p/locations/us/operations/op-3")
    late["metadata"] = dict(late["metadata"], endTime=12)
    for operation in (run_operation(), cancelled, running, unnamed, late):
        flattener.add(operation, 1_700_000_000_000_000)
    rows = flattener.take_batches()["evaluation_run_operations"].to_pylist()
    assert [
        (
            r["done"],
            r["create_time"],
            r["end_time"],
            r["cancel_requested"],
            r["error_code"],
            r["error_message"],
        )
        for r in rows
    ] == [
        (
            True,
            datetime(2026, 11, 2, 3, 0, 0, 500000, UTC),
            datetime(2026, 11, 2, 3, 42, 10, 250000, UTC),
            False,
            None,
            None,
        ),
        (
            True,
            datetime(2026, 11, 2, 3, 0, 0, 500000, UTC),
            datetime(2026, 11, 2, 3, 42, 10, 250000, UTC),
            True,
            1,
            "cancelled by ops",
        ),
        (False, datetime(2026, 11, 2, 3, 0, 0, 500000, UTC), None, False, None, None),
    ]
    assert {(r["evaluation_run_name"], r["app"], r["operation_name"], r["verb"]) for r in rows} == {
        (RUN, APP, OPERATION, "create")
    }
    assert [(r.resource_name, r.source, r.reason.split(":")[0]) for r in flattener.take_rejects()] == [
        ("projects/p/locations/us/operations/op-2", "evaluation_operation", "metadata.evaluationRun"),
        ("projects/p/locations/us/operations/op-3", "evaluation_operation", "metadata.endTime"),
    ]


def test_results() -> None:
    flattener = EvaluationResultFlattener()
    result = {
        "name": f"{APP}/evaluations/e1/results/r1",
        "evaluationRun": RUN,
        "displayName": "r1",
        "createTime": "2026-11-02T03:01:00Z",
        "evaluationStatus": "FAIL",
        "executionState": "COMPLETED",
        "persona": {"name": f"{APP}/evaluationPersonas/angry", "displayName": "Angry"},
        "goldenResult": {"turnReplayResults": []},
    }
    errored = {
        "name": f"{APP}/evaluations/e2/results/r2",
        "executionState": "ERROR",
        "errorInfo": {"errorType": "RUNTIME_FAILURE", "errorMessage": "boom"},
    }
    assert flattener.add(result) and flattener.add(errored) and not flattener.add({"name": RUN})
    rows = flattener.take_batches()["evaluation_results"].to_pylist()
    assert [
        (r["evaluation_name"][-2:], r["evaluation_status"], r["execution_state"], r["result_type"])
        for r in rows
    ] == [
        ("e1", "FAIL", "COMPLETED", "golden"),
        ("e2", None, "ERROR", None),
    ]
    assert rows[0]["persona"] == f"{APP}/evaluationPersonas/angry"
    assert (rows[1]["error_type"], rows[1]["error_message"]) == ("RUNTIME_FAILURE", "boom")
    assert len(flattener.take_rejects()) == 1


def test_every_latency_entry_is_a_row_even_when_entries_share_a_subject() -> None:
    """Two tools of one toolset named without toolId, two callbacks of one stage: four entries,
    four rows, told apart by their position in the report."""
    run = completed_run()
    metrics = {"p50Latency": "0.1s", "callCount": 1}
    run["latencyReport"] = {
        "toolLatencies": [
            {"toolsetTool": {"toolset": f"{APP}/toolsets/crm"}, "latencyMetrics": metrics},
            {"toolsetTool": {"toolset": f"{APP}/toolsets/crm"}, "latencyMetrics": metrics},
        ],
        "callbackLatencies": [{"stage": "beforeModel", "latencyMetrics": metrics}] * 2,
    }
    tables, rejects = flatten([run])
    assert rejects == []
    keys = [(r["kind"], r["entry_index"], r["subject"]) for r in tables["evaluation_run_latencies"]]
    assert keys == [
        ("tool", 0, f"{APP}/toolsets/crm"),
        ("tool", 1, f"{APP}/toolsets/crm"),
        ("callback", 0, "beforeModel"),
        ("callback", 1, "beforeModel"),
    ]


RESULT = f"{APP}/evaluations/e1/results/r1"
EVAL_CONVERSATION = f"{APP}/conversations/eval-1"


def result_details(result: dict) -> dict[str, list[dict]]:
    """Each detail table's rows of one result, without the key columns every row repeats."""
    flattener = EvaluationResultFlattener()
    assert flattener.add(result), flattener.take_rejects()
    tables = {name: batch.to_pylist() for name, batch in flattener.take_batches().items()}
    for name, rows in tables.items():
        for row in rows if name != "evaluation_results" else []:
            assert (row.pop("evaluation_result_name"), row.pop("evaluation_run_name")) == (RESULT, RUN)
    return tables


def picked(rows: list[dict], *columns: str) -> list[tuple]:
    return [tuple(row[column] for column in columns) for row in rows]


def test_a_golden_result_keeps_every_turn_score_expectation_and_latency() -> None:
    call = {"tool": f"{APP}/tools/lookup", "id": "c1", "displayName": "lookup", "args": {"order": "A-1"}}
    result = {
        "name": RESULT,
        "evaluationRun": RUN,
        "evaluationStatus": "FAIL",
        "appVersionDisplayName": "v7",
        "changelog": "stricter greeting",
        "goldenRunMethod": 1,  # a number: stored by name
        "evaluationMetricsThresholds": {"hallucinationMetricBehavior": "ENABLED"},
        "goldenResult": {
            "turnReplayResults": [
                {
                    "conversation": EVAL_CONVERSATION,
                    "expectationOutcome": [
                        {
                            "expectation": {"toolCall": call},
                            "observedToolCall": {**call, "args": {"order": "A-2"}},
                            "outcome": "FAIL",
                            "toolInvocationResult": {
                                "parameterCorrectnessScore": 0.5,
                                "outcome": "FAIL",
                                "explanation": "order differs",
                            },
                        },
                        {
                            "expectation": {"agentResponse": {"role": "agent", "chunks": [{"text": "hi"}]}},
                            "observedAgentResponse": {"role": "agent", "chunks": [{"text": "hello"}]},
                            "outcome": "PASS",
                            "semanticSimilarityResult": {"score": 4, "outcome": "PASS"},
                        },
                    ],
                    "hallucinationResult": {"score": 1, "label": "Hallucination", "explanation": "made up"},
                    "toolInvocationScore": "0.25",  # proto3 JSON may quote a float
                    "toolOrderedInvocationScore": "NaN",
                    "turnLatency": "1.500s",
                    "toolCallLatencies": [
                        {
                            "tool": f"{APP}/tools/lookup",
                            "displayName": "lookup",
                            "startTime": "2026-11-02T03:00:01Z",
                            "endTime": "2026-11-02T03:00:01.250Z",
                            "executionLatency": "0.250s",
                        }
                    ],
                    "semanticSimilarityResult": {"score": 2, "label": "Different", "outcome": "FAIL"},
                    "overallToolInvocationResult": {"toolInvocationScore": 0.5, "outcome": "FAIL"},
                    "errorInfo": {"errorType": "METRIC_CALCULATION_FAILURE", "errorMessage": "no order"},
                    "spanLatencies": [
                        {"model": "gemini-2.5-flash", "type": 4, "executionLatency": "0.8s"},
                        {"toolset": {"toolset": f"{APP}/toolsets/crm", "toolId": "find"}, "type": "TOOL"},
                    ],
                }
            ],
            "evaluationExpectationResults": [
                {
                    "evaluationExpectation": f"{APP}/evaluationExpectations/x1",
                    "prompt": "confirms the order",
                    "outcome": "FAIL",
                    "explanation": "never confirmed",
                }
            ],
        },
    }
    tables = result_details(result)
    (row,) = tables["evaluation_results"]
    assert picked([row], "app_version_display_name", "changelog", "golden_run_method") == [
        ("v7", "stricter greeting", "STABLE")
    ]
    assert json.loads(row["evaluation_metrics_thresholds"]) == {"hallucinationMetricBehavior": "ENABLED"}
    columns = ("turn_index", "conversation_name", "turn_latency_seconds", "error_type", "error_message")
    assert picked(tables["evaluation_turn_replays"], *columns) == [
        (0, EVAL_CONVERSATION, 1.5, "METRIC_CALCULATION_FAILURE", "no order")
    ]
    scores = tables["evaluation_scores"]
    assert picked(scores, "score_index", "metric", "turn_index", "label", "outcome", "explanation") == [
        (0, "semantic_similarity", 0, "Different", "FAIL", None),
        (1, "hallucination", 0, "Hallucination", None, "made up"),
        (2, "tool_invocation", 0, None, None, None),
        (3, "tool_ordered_invocation", 0, None, None, None),
        (4, "overall_tool_invocation", 0, None, "FAIL", None),
    ]
    values = [row["score"] for row in scores]
    assert values[:3] == [2.0, 1.0, 0.25] and values[3] != values[3] and values[4] == 0.5  # NaN kept
    outcomes = tables["evaluation_expectation_outcomes"]
    columns = ("outcome_index", "turn_index", "expectation_kind", "expected_tool", "outcome", "observed_kind")
    assert picked(outcomes, *columns) == [
        (0, 0, "tool_call", f"{APP}/tools/lookup", "FAIL", "tool_call"),
        (1, 0, "agent_response", None, "PASS", "agent_response"),
    ]
    columns = (
        "semantic_similarity_score",
        "semantic_similarity_outcome",
        "parameter_correctness_score",
        "tool_invocation_outcome",
        "tool_invocation_explanation",
    )
    assert picked(outcomes, *columns) == [
        (None, None, 0.5, "FAIL", "order differs"),
        (4.0, "PASS", None, None, None),
    ]
    assert json.loads(outcomes[0]["observed"])["args"] == {"order": "A-2"}
    assert json.loads(outcomes[0]["expectation"]) == {"toolCall": call}
    assert picked(tables["evaluation_expectation_results"], "expectation_index", "prompt", "outcome") == [
        (0, "confirms the order", "FAIL")
    ]
    columns = ("latency_index", "turn_index", "kind", "span_type", "subject", "latency_seconds")
    assert picked(tables["evaluation_result_latencies"], *columns) == [
        (0, 0, "tool_call", None, f"{APP}/tools/lookup", 0.25),
        (1, 0, "span", "LLM", "gemini-2.5-flash", 0.8),
        (2, 0, "span", "TOOL", f"{APP}/toolsets/crm/find", None),
    ]
    assert tables["evaluation_result_latencies"][0]["end_time"] == datetime(
        2026, 11, 2, 3, 0, 1, 250_000, UTC
    )
    assert tables["evaluation_scenario_results"] == []


def test_a_scenario_result_keeps_its_verdicts_rubrics_and_expectations() -> None:
    call = {"tool": f"{APP}/tools/refund", "displayName": "refund", "args": {"amount": 5}}
    result = {
        "name": RESULT,
        "evaluationRun": RUN,
        "scenarioResult": {
            "conversation": EVAL_CONVERSATION,
            "task": "get a refund",
            "userFacts": [{"name": "order_id", "value": "A-1"}],
            "expectationOutcomes": [
                {"expectation": {"toolExpectation": {"expectedToolCall": call}}, "outcome": "FAIL"}
            ],
            "rubricOutcomes": [{"rubric": "Politeness", "score": 0.75, "scoreExplanation": "mostly"}],
            "hallucinationResult": [{"label": "none"}],
            "taskCompletionResult": {"score": 1, "label": "completed"},
            "userGoalSatisfactionResult": {"explanation": "left unhappy"},
            "allExpectationsSatisfied": False,
            "taskCompleted": True,
            "toolCallLatencies": [{"tool": f"{APP}/tools/refund", "executionLatency": "2s"}],
        },
    }
    tables = result_details(result)
    columns = ("conversation_name", "task", "user_facts", "all_expectations_satisfied", "task_completed")
    assert picked(tables["evaluation_scenario_results"], *columns) == [
        (EVAL_CONVERSATION, "get a refund", '[{"name":"order_id","value":"A-1"}]', False, True)
    ]
    columns = ("score_index", "metric", "turn_index", "rubric", "score", "label", "explanation")
    assert picked(tables["evaluation_scores"], *columns) == [
        (0, "task_completion", None, None, 1.0, "completed", None),
        (1, "user_goal_satisfaction", None, None, 0.0, None, "left unhappy"),  # proto3 omits a zero
        (2, "hallucination", None, None, 0.0, "none", None),
        (3, "rubric", None, "Politeness", 0.75, None, "mostly"),
    ]
    columns = ("outcome_index", "turn_index", "expectation_kind", "expected_tool", "outcome", "observed")
    assert picked(tables["evaluation_expectation_outcomes"], *columns) == [
        (0, None, "tool_call", f"{APP}/tools/refund", "FAIL", None)
    ]
    columns = ("latency_index", "turn_index", "kind", "subject", "latency_seconds")
    assert picked(tables["evaluation_result_latencies"], *columns) == [
        (0, None, "tool_call", f"{APP}/tools/refund", 2.0)
    ]
    assert tables["evaluation_turn_replays"] == []


def test_a_bad_score_rejects_its_result_with_the_field_named() -> None:
    result = {"name": RESULT, "goldenResult": {"turnReplayResults": [{"toolInvocationScore": "high"}]}}
    flattener = EvaluationResultFlattener()
    assert not flattener.add(result)
    (reject,) = flattener.take_rejects()
    assert "turnReplayResults[0].toolInvocationScore: expected a number, got 'high'" in reject.reason


def test_an_errored_result_keeps_its_error_status_changelog_and_persona_voice() -> None:
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "QUOTA_EXHAUSTED"}]
    result = {
        "name": RESULT,
        "evaluationRun": RUN,
        "persona": {
            "name": f"{APP}/evaluationPersonas/impatient",
            "speechConfig": {"speakingRate": 1.35, "environment": "TRAFFIC", "voiceId": "en-US-Wavenet-D"},
        },
        "errorInfo": {
            "errorType": "QUOTA_EXHAUSTED",
            "errorMessage": "LLM quota exhausted",
            "sessionId": "session-1",
            "userFacingErrorMessage": "Please retry later.",
        },
        "error": {"code": 8, "message": "RESOURCE_EXHAUSTED", "details": details},
        "changelog": "stricter greeting",
        "changelogCreateTime": "2026-11-02T00:00:00.250Z",
        "executionState": "ERROR",
    }
    (row,) = result_details(result)["evaluation_results"]
    columns = ("error_type", "error_message", "error_session_id", "user_facing_error_message")
    assert picked([row], *columns) == [
        ("QUOTA_EXHAUSTED", "LLM quota exhausted", "session-1", "Please retry later.")
    ]
    assert (row["error_status_code"], row["error_status_message"]) == (8, "RESOURCE_EXHAUSTED")
    assert json.loads(row["error_status_details"]) == details
    assert row["changelog_create_time"] == datetime(2026, 11, 2, 0, 0, 0, 250_000, UTC)
    assert json.loads(row["persona_speech_config"]) == {
        "speakingRate": 1.35,
        "environment": "TRAFFIC",
        "voiceId": "en-US-Wavenet-D",
    }
    (plain,) = result_details({"name": RESULT, "evaluationRun": RUN})["evaluation_results"]
    assert plain["error_status_code"] is None and plain["persona_speech_config"] is None


LOOKUP = {"tool": f"{APP}/tools/lookup", "id": "c1", "displayName": "lookup"}
CRM = {"toolsetTool": {"toolset": f"{APP}/toolsets/crm", "toolId": "find"}, "id": "c2", "displayName": "find"}
BILLING = f"{APP}/agents/billing"


def golden_turn(observed_response: dict) -> dict:
    """A replayed turn with an expectation of every kind, and the agent response observed."""
    transfer = {"targetAgent": BILLING, "displayName": "Billing"}
    return {
        "name": RESULT,
        "evaluationRun": RUN,
        "goldenResult": {
            "turnReplayResults": [
                {
                    "expectationOutcome": [
                        {
                            "expectation": {"mockToolResponse": {**CRM, "response": {"output": {"n": 1}}}},
                            "outcome": "SKIPPED",
                        },
                        {
                            "expectation": {
                                "toolCall": {**LOOKUP, "args": {"order": "A-1"}},
                                "note": "Check_Lookup_Called",
                                "expectationLevelMetricsThresholdsOverride": {
                                    "toolInvocationParameterCorrectnessThreshold": 0.5
                                },
                            },
                            "observedToolCall": {**LOOKUP, "args": {"order": "A-1"}},
                            "outcome": "PASS",
                        },
                        {
                            "expectation": {"toolResponse": {**LOOKUP, "response": {"output": {"s": "ok"}}}},
                            "observedToolResponse": {
                                **LOOKUP,
                                "response": {"error": {"code": "UNAVAILABLE"}},
                            },
                            "outcome": "FAIL",
                        },
                        {
                            "expectation": {"agentTransfer": transfer},
                            "observedAgentTransfer": transfer,
                            "outcome": "PASS",
                        },
                        {"expectation": {"updatedVariables": {"resolved": True}}, "outcome": "FAIL"},
                        {
                            "expectation": {
                                "agentResponse": {
                                    "role": "agent",
                                    "chunks": [{"transcript": "Your order ships."}],
                                },
                                "comparisonType": "SEMANTIC_SIMILARITY",
                                "agentResponseSemanticSimilarityMetricsConfigOverride": {
                                    "enableSemanticSimilarityMetrics": True
                                },
                                "agentResponseHallucinationMetricsConfigOverride": {},
                            },
                            "observedAgentResponse": observed_response,
                            "outcome": "PASS",
                            "semanticSimilarityResult": {
                                "score": 4,
                                "label": "Equivalent",
                                "explanation": "Same facts.",
                                "outcome": "PASS",
                            },
                        },
                        {"observedPayload": {"richContent": []}, "outcome": "SKIPPED"},
                        {
                            "expectation": {"noToolCalls": True, "skipEvaluation": True},
                            "observedToolCall": {**CRM, "args": {}},
                            "outcome": "SKIPPED",
                        },
                    ],
                    "errorInfo": {
                        "errorType": "METRIC_CALCULATION_FAILURE",
                        "sessionId": "session-2",
                        "userFacingErrorMessage": "Some scores could not be computed.",
                    },
                }
            ]
        },
    }


OBSERVED_RESPONSE = {
    "role": "agent",
    "chunks": [
        {"agentTransfer": {"targetAgent": BILLING, "displayName": "Billing"}},
        {"transcript": "Your order ships"},
        {"transcript": "tomorrow."},
        {"blob": {"mimeType": "audio/l16; rate=24000", "data": "+/+/AA=="}},
    ],
    "eventTime": "2026-11-02T03:00:01.123456789Z",
}


def test_a_golden_turn_keeps_every_expectation_kind_its_overrides_and_what_was_observed() -> None:
    tables = result_details(golden_turn(OBSERVED_RESPONSE))
    outcomes = tables["evaluation_expectation_outcomes"]
    columns = ("expectation_kind", "expected_tool", "outcome", "observed_kind", "observed_tool", "note")
    assert picked(outcomes, *columns) == [
        ("mock_tool_response", f"{APP}/toolsets/crm/find", "SKIPPED", None, None, None),
        (
            "tool_call",
            f"{APP}/tools/lookup",
            "PASS",
            "tool_call",
            f"{APP}/tools/lookup",
            "Check_Lookup_Called",
        ),
        ("tool_response", f"{APP}/tools/lookup", "FAIL", "tool_response", f"{APP}/tools/lookup", None),
        ("agent_transfer", None, "PASS", "agent_transfer", None, None),
        ("updated_variables", None, "FAIL", None, None, None),
        ("agent_response", None, "PASS", "agent_response", None, None),
        (None, None, "SKIPPED", "payload", None, None),
        ("no_tool_calls", None, "SKIPPED", "tool_call", f"{APP}/toolsets/crm/find", None),
    ]
    columns = (
        "skip_evaluation",
        "comparison_type",
        "parameter_correctness_threshold",
        "semantic_similarity_enabled",
        "hallucination_enabled",
    )
    assert [picked(outcomes, *columns)[i] for i in (1, 5, 7)] == [
        (False, None, 0.5, None, None),
        (False, "SEMANTIC_SIMILARITY", None, True, False),  # a config set without its flag: off
        (True, None, None, None, None),
    ]
    columns = ("expected_agent", "observed_agent")
    assert picked(outcomes, *columns)[3] == (BILLING, BILLING)
    assert picked(outcomes, *columns)[5] == (None, BILLING)  # the response's agentTransfer chunk
    response = outcomes[5]
    assert (response["semantic_similarity_label"], response["semantic_similarity_explanation"]) == (
        "Equivalent",
        "Same facts.",
    )
    assert (response["expected_text"], response["observed_text"]) == (
        "Your order ships.",
        "Your order ships\ntomorrow.",
    )
    assert response["observed_time"] == datetime(2026, 11, 2, 3, 0, 1, 123456, UTC)
    assert json.loads(response["observed"]) == OBSERVED_RESPONSE
    assert json.loads(outcomes[2]["observed"])["response"] == {"error": {"code": "UNAVAILABLE"}}
    assert json.loads(outcomes[6]["observed"]) == {"richContent": []}
    columns = ("error_type", "error_session_id", "user_facing_error_message")
    assert picked(tables["evaluation_turn_replays"], *columns) == [
        ("METRIC_CALCULATION_FAILURE", "session-2", "Some scores could not be computed.")
    ]


def test_a_response_in_any_legal_form_flattens_as_google_prints_it() -> None:
    """Members sent as null, URL-safe base64 without padding, another offset: the same rows."""
    other_form = {
        "role": "agent",
        "chunks": [
            {"text": None, "agentTransfer": {"targetAgent": BILLING, "displayName": "Billing"}},
            {"transcript": "Your order ships"},
            {"transcript": "tomorrow."},
            {"text": None, "blob": {"mimeType": "audio/l16; rate=24000", "data": "-_-_AA"}},
        ],
        "eventTime": "2026-11-02T08:30:01.123456789+05:30",
    }
    assert result_details(golden_turn(other_form)) == result_details(golden_turn(OBSERVED_RESPONSE))


def test_a_scenario_response_expectation_keeps_its_mock_and_what_the_agent_said() -> None:
    call = {"tool": f"{APP}/tools/refund", "displayName": "refund"}
    expected = {
        "role": "agent",
        "chunks": [{"text": "Your refund is on its way."}, {"payload": {"chips": ["Track"]}}],
    }
    observed = {"role": "agent", "chunks": [{"toolCall": {**call, "id": "c9", "args": {}}}]}
    result = {
        "name": RESULT,
        "evaluationRun": RUN,
        "scenarioResult": {
            "expectationOutcomes": [
                {
                    "expectation": {
                        "toolExpectation": {
                            "expectedToolCall": {**call, "args": {"amount": 5}},
                            "mockToolResponse": {**call, "response": {"output": {"ok": True}}},
                        }
                    },
                    "observedToolCall": {
                        "toolCall": {**call, "args": {"amount": 5}},
                        "toolResponse": {**call, "response": {"output": {"ok": True}}},
                    },
                    "outcome": "PASS",
                },
                {
                    "expectation": {"agentResponse": expected},
                    "observedAgentResponse": observed,
                    "outcome": "FAIL",
                },
            ]
        },
    }
    outcomes = result_details(result)["evaluation_expectation_outcomes"]
    columns = (
        "expectation_kind",
        "expected_tool",
        "observed_kind",
        "observed_tool",
        "expected_text",
        "observed_text",
    )
    assert picked(outcomes, *columns) == [
        ("tool_call", f"{APP}/tools/refund", "tool_call", f"{APP}/tools/refund", None, None),
        ("agent_response", None, "agent_response", None, "Your refund is on its way.", None),
    ]
    mock = json.loads(outcomes[0]["expectation"])["toolExpectation"]["mockToolResponse"]
    assert mock["response"] == {"output": {"ok": True}}
    assert json.loads(outcomes[1]["observed"]) == observed and outcomes[1]["observed_time"] is None
