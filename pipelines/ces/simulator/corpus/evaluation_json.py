"""The proto3 JSON of a planned evaluation run (evaluations.py) at a progress step: the
EvaluationRun, its EvaluationResults, and the Operation that started it."""

from __future__ import annotations

import random
from typing import Any

from pipelines.ces.simulator.corpus.catalog import AppCatalog, Persona
from pipelines.ces.simulator.corpus.evaluation_outcomes import (
    NO_CONVERSATIONS,
    EvalConversations,
    outcome_detail,
)
from pipelines.ces.simulator.corpus.evaluations import RUN_STEPS, ResultPlan, RunPlan
from pipelines.ces.simulator.corpus.protojson import (
    NANOS_PER_MILLI,
    NANOS_PER_SECOND,
    between,
    duration,
    seeded_random,
    stable_hex,
    timestamp,
)

OPERATION_TYPE = "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationOperationMetadata"
RESPONSE_TYPE = "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationResponse"
_ERROR_TYPES = (
    ("RUNTIME_FAILURE", "agent runtime returned INTERNAL for 2 sessions"),
    ("QUOTA_EXHAUSTED", "LLM quota exhausted for model gemini-2.5-pro"),
    ("USER_SIMULATION_FAILURE", "user simulator failed to produce a turn"),
    ("CONVERSATION_RETRIEVAL_FAILURE", "conversation not found in CES runtime"),
    ("METRIC_CALCULATION_FAILURE", "semantic similarity could not be computed"),
    ("EVALUATION_UPDATE_FAILURE", "the evaluation's results could not be saved"),
    (None, "an unclassified error occurred"),
)
"""Every ErrorType; None leaves `errorType` out, which is ERROR_TYPE_UNSPECIFIED."""
_OPTIMIZATION_STATUSES = ("COMPLETED", "COMPLETED", "COMPLETED", "RUNNING", "ERROR", None)
"""The status of a completed run's optimization; None leaves it out (OPTIMIZATION_STATUS_UNSPECIFIED)."""


def _config(plan: RunPlan) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if plan.channel == "AUDIO":
        config["inputAudioConfig"] = {
            "audioEncoding": "LINEAR16",
            "sampleRateHertz": 16000,
            "noiseSuppressionLevel": "moderate",
        }
        # Telephony: G.711 mu-law in North America and Japan, A-law elsewhere.
        encoding = "ALAW" if seeded_random(plan.name, "telephony").random() < 0.4 else "MULAW"
        config["outputAudioConfig"] = {"audioEncoding": encoding, "sampleRateHertz": 8000}
    config["evaluationChannel"] = plan.channel
    config["toolCallBehaviour"] = plan.tool_call_behaviour
    return config


def _counts(results: tuple[ResultPlan, ...]) -> dict[str, int]:
    counts = {"PASS": 0, "FAIL": 0, "ERROR": 0, "CANCELLED": 0}
    for result in results:
        counts[result.outcome] += 1
    return counts


def _nonzero(pairs: list[tuple[str, int]]) -> dict[str, int]:
    """Proto3 JSON omits zero integers."""
    return {key: value for key, value in pairs if value}


def _latency_metrics(rng: random.Random, calls: int, low_ms: int, high_ms: int) -> dict[str, Any]:
    p50 = between(rng, low_ms, high_ms) * NANOS_PER_MILLI + between(rng, 0, 999) * 1000 * (rng.random() < 0.3)
    p90 = p50 + between(rng, 0, high_ms) * NANOS_PER_MILLI
    p99 = p90 + between(rng, 0, 2 * high_ms) * NANOS_PER_MILLI
    return {
        "p50Latency": duration(p50),
        "p90Latency": duration(p90),
        "p99Latency": duration(p99),
        "callCount": calls,
    }


def _latency_report(plan: RunPlan, catalog: AppCatalog, finished: int) -> dict[str, Any]:
    rng = seeded_random(plan.name, "latency-report")
    sessions = finished * max(1, sum(task_count for _, task_count in plan.personas))
    tools = rng.sample(catalog.tools, 4)
    return {
        "toolLatencies": [
            {
                **tool.identifier(),
                "toolDisplayName": tool.display_name,
                "latencyMetrics": _latency_metrics(rng, sessions * between(rng, 1, 3), 80, 900),
            }
            for tool in tools
        ],
        "callbackLatencies": [
            {
                "stage": callback.stage,
                "latencyMetrics": _latency_metrics(rng, sessions * between(rng, 2, 6), 1, 30),
            }
            for callback in catalog.callbacks[:3]
        ],
        "guardrailLatencies": [
            {
                "guardrail": guardrail.name,
                "guardrailDisplayName": guardrail.display_name,
                "latencyMetrics": _latency_metrics(rng, sessions * between(rng, 2, 6), 15, 140),
            }
            for guardrail in catalog.guardrails
        ],
        "llmCallLatencies": [
            {
                "model": model,
                "latencyMetrics": _latency_metrics(rng, sessions * between(rng, 3, 9), 300, 2200),
            }
            for model in (catalog.audio_model if plan.channel == "AUDIO" else catalog.text_models[0],)
        ],
        "sessionCount": sessions,
    }


_STATUS_CODES = {"QUOTA_EXHAUSTED": 8, "CONVERSATION_RETRIEVAL_FAILURE": 5}
"""google.rpc.Code of the deprecated `error` Status per ErrorType (RESOURCE_EXHAUSTED, NOT_FOUND);
INTERNAL (13) otherwise."""
_USER_FACING_ERRORS = {
    "QUOTA_EXHAUSTED": "The evaluation ran out of quota. Please retry later.",
    "CONVERSATION_RETRIEVAL_FAILURE": "The conversation to evaluate could not be found.",
}


def _changelog(plan: RunPlan, catalog: AppCatalog) -> dict[str, Any]:
    """The changelog of the app version a run (and each of its results) evaluated, if it has one."""
    if not plan.changelog:
        return {}
    return {
        "changelog": f"Update instructions of {catalog.root_agent.display_name}",
        "changelogCreateTime": timestamp(plan.create_time - 3 * 3_600 * NANOS_PER_SECOND),
    }


def _persona_json(persona: Persona) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": persona.name,
        "description": persona.description,
        "displayName": persona.display_name,
        "personality": persona.personality,
    }
    if persona.speech is not None:
        rate, environment, voice = persona.speech
        out["speechConfig"] = {"speakingRate": rate, "environment": environment, "voiceId": voice}
    return out


def _result_error(result: ResultPlan, rng: random.Random) -> dict[str, Any]:
    """`errorInfo` of a result whose evaluation errored and, for some, the deprecated `error` Status
    it replaces, saying the same with a google.rpc.ErrorInfo detail."""
    error_type, message = rng.choice(_ERROR_TYPES)
    session = f"session-{stable_hex(result.name, length=12)}"
    info = {"errorType": error_type} if error_type else {}
    info["errorMessage"] = message
    info["sessionId"] = session
    info["userFacingErrorMessage"] = _USER_FACING_ERRORS.get(
        error_type or "", "The evaluation could not be completed. Please retry."
    )
    out: dict[str, Any] = {"errorInfo": info}
    if seeded_random(result.name, "status").random() < 0.5:
        out["error"] = {
            "code": _STATUS_CODES.get(error_type or "", 13),
            "message": message,
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": error_type or "ERROR_TYPE_UNSPECIFIED",
                    "domain": "ces.googleapis.com",
                    "metadata": {"sessionId": session},
                }
            ],
        }
    return out


def _error_fields(plan: RunPlan) -> dict[str, Any]:
    rng = seeded_random(plan.name, "error")
    error_type, message = rng.choice(_ERROR_TYPES)
    if plan.error_style == "status":
        return {"error": {"code": 13, "message": f"evaluation run failed: {message}"}}
    info = {"errorType": error_type} if error_type else {}
    info["errorMessage"] = message
    info["sessionId"] = f"session-{stable_hex(plan.name, 'session', length=12)}"
    info["userFacingErrorMessage"] = "The evaluation could not be completed. Please retry."
    return {"errorInfo": info}


def evaluation_run_json(plan: RunPlan, step: int, catalog: AppCatalog) -> dict[str, Any]:
    """Proto3 JSON of google.cloud.ces.v1beta.EvaluationRun at progress `step`."""
    state = plan.state_at(step)
    finished = plan.results[: plan.finished_at(step)]
    counts = _counts(finished)
    out: dict[str, Any] = {"name": plan.name, "displayName": plan.display_name}
    if step > 0:
        out["evaluationResults"] = [result.name for result in plan.results]
    out["createTime"] = timestamp(plan.create_time)
    out["initiatedBy"] = plan.initiated_by
    out["appVersion"], out["appVersionDisplayName"] = plan.app_version
    out.update(_changelog(plan, catalog))
    if plan.dataset is not None:
        out["evaluationDataset"] = plan.dataset.name
    else:
        out["evaluations"] = [evaluation.name for evaluation in plan.evaluations]
    out["evaluationType"] = plan.evaluation_type
    out["state"] = state
    out["progress"] = _nonzero(
        [
            ("totalCount", len(plan.results)),
            ("failedCount", counts["FAIL"]),
            ("errorCount", counts["ERROR"]),
            ("completedCount", counts["PASS"] + counts["FAIL"]),
            ("passedCount", counts["PASS"]),
            ("cancelledCount", counts["CANCELLED"]),
        ]
    )
    out["config"] = _config(plan)
    if state == "ERROR":
        out.update(_error_fields(plan))
    summaries: dict[str, dict[str, int]] = {}
    for result in finished:
        if result.outcome != "CANCELLED":
            summary = summaries.setdefault(result.evaluation.name, {})
            field = {"PASS": "passedCount", "FAIL": "failedCount", "ERROR": "errorCount"}[result.outcome]
            summary[field] = summary.get(field, 0) + 1
    if summaries:
        out["evaluationRunSummaries"] = summaries
    if finished:
        out["latencyReport"] = _latency_report(plan, catalog, len(finished))
    out["runCount"] = plan.run_count
    if plan.personas:
        out["personaRunConfigs"] = [
            {"persona": persona.name, "taskCount": task_count} for persona, task_count in plan.personas
        ]
    if plan.optimization and state == "COMPLETED":
        out["optimizationConfig"] = _optimization(plan, catalog, counts["FAIL"])
    if plan.scheduled_by:
        out["scheduledEvaluationRun"] = plan.scheduled_by
    if plan.golden_run_method:
        out["goldenRunMethod"] = plan.golden_run_method
    out["operation"] = plan.operation
    return out


def _thresholds(plan: RunPlan) -> dict[str, Any]:
    """The metric thresholds a run's results were judged by (every enum value across runs)."""
    rng = seeded_random(plan.name, "thresholds")
    behaviours = ("ENABLED", "DISABLED", None)  # None: left out, HALLUCINATION_METRIC_BEHAVIOR_UNSPECIFIED
    out: dict[str, Any] = {
        "goldenEvaluationMetricsThresholds": {
            "turnLevelMetricsThresholds": {
                "semanticSimilaritySuccessThreshold": rng.choice((2, 3)),
                "overallToolInvocationCorrectnessThreshold": rng.choice((0.8, 1.0)),
                "semanticSimilarityChannel": "AUDIO" if plan.channel == "AUDIO" else "TEXT",
            },
            "expectationLevelMetricsThresholds": {"toolInvocationParameterCorrectnessThreshold": 1.0},
            "toolMatchingSettings": {"extraToolCallBehavior": rng.choice(("FAIL", "ALLOW"))},
        },
    }
    for field in ("hallucination", "goldenHallucination", "scenarioHallucination"):
        if behaviour := rng.choice(behaviours):
            out[f"{field}MetricBehavior"] = behaviour
    return out


def _optimization(plan: RunPlan, catalog: AppCatalog, failed: int) -> dict[str, Any]:
    session_id = stable_hex(plan.name, "assistant-session", length=10)
    status = seeded_random(plan.name, "optimization").choice(_OPTIMIZATION_STATUSES)
    out: dict[str, Any] = {
        "generateLossReport": True,
        "assistantSession": f"{catalog.app_name}/assistantSessions/{session_id}",
    }
    if status == "COMPLETED":
        out["reportSummary"] = "Most failures come from missing order-id confirmation."
    out["shouldSuggestFix"] = True
    if status:
        out["status"] = status
    if status == "ERROR":
        out["errorMessage"] = "the loss report could not be generated"
    if status == "COMPLETED":
        out["lossReport"] = {"losses": [{"evaluation": plan.evaluations[0].name, "count": failed}]}
    return out


def evaluation_results_json(
    plan: RunPlan, step: int, catalog: AppCatalog, conversations: EvalConversations = NO_CONVERSATIONS
) -> list[dict[str, Any]]:
    """Proto3 JSON of the google.cloud.ces.v1beta.EvaluationResult of a run at `step`.

    Nothing is listed while the run is queued; finished results carry their outcome; of the
    others, the next two (the run's concurrency) are RUNNING and the rest QUEUED.
    """
    if step <= 0:
        return []
    finished = plan.finished_at(step)
    out = []
    for position, result in enumerate(plan.results):
        rng = seeded_random(result.name)
        done = position < finished
        state = (
            {"PASS": "COMPLETED", "FAIL": "COMPLETED"}.get(result.outcome, result.outcome)
            if done
            else "RUNNING"
            if position < finished + 2
            else "QUEUED"
        )
        item: dict[str, Any] = {
            "name": result.name,
            "displayName": f"{result.evaluation.display_name} #{position + 1}",
            "createTime": timestamp(plan.create_time + result.finish_offset // 2),
        }
        if done and result.outcome != "ERROR":
            item["evaluationStatus"] = "SKIPPED" if result.outcome == "CANCELLED" else result.outcome
        item["evaluationRun"] = plan.name
        if result.persona is not None:
            item["persona"] = _persona_json(result.persona)
        if done and result.outcome == "ERROR":
            item.update(_result_error(result, rng))
        item["initiatedBy"] = plan.initiated_by
        item["appVersion"], item["appVersionDisplayName"] = plan.app_version
        item.update(_changelog(plan, catalog))
        item["executionState"] = state
        item["config"] = _config(plan)
        if plan.golden_run_method and result.evaluation.kind == "GOLDEN":
            item["goldenRunMethod"] = plan.golden_run_method
        if state == "COMPLETED":
            item["evaluationMetricsThresholds"] = _thresholds(plan)
            start = plan.result_start(result)
            item.update(outcome_detail(result, rng, catalog, start, conversations, plan.channel))
        out.append(item)
    return out


def operation_json(plan: RunPlan, step: int) -> dict[str, Any]:
    """Proto3 JSON of the google.longrunning.Operation that created `plan`, with the run at `step`.

    The operation lasts as long as its run: it is done when the run reaches its final state, and
    ends in an error Status when that state is ERROR (INTERNAL) or CANCELLED (CANCELLED)."""
    done = step >= RUN_STEPS
    metadata: dict[str, Any] = {
        "@type": OPERATION_TYPE,
        "evaluations": [evaluation.name for evaluation in plan.evaluations],
        "evaluationRun": plan.name,
        "createTime": timestamp(plan.create_time),
    }
    if done:
        metadata["endTime"] = timestamp(plan.update_time(RUN_STEPS))
    metadata["verb"] = "create"
    if done and plan.final_state == "CANCELLED":
        metadata["cancelRequested"] = True
    out: dict[str, Any] = {"name": plan.operation, "metadata": metadata}
    if not done:
        return out
    out["done"] = True
    if plan.final_state == "ERROR":
        out["error"] = {"code": 13, "message": f"evaluation run {plan.name} ended in ERROR"}
    elif plan.final_state == "CANCELLED":
        out["error"] = {"code": 1, "message": f"evaluation run {plan.name} was cancelled"}
    else:
        out["response"] = {"@type": RESPONSE_TYPE, "evaluationRun": plan.name}
    return out
