"""Synthetic evaluation runs, their results, and the long-running operations that start them.

Each run is planned once (`RunPlan`: its evaluations, every result's final outcome, its config)
and then viewed at a progress step: step 0 is QUEUED, steps 1..RUN_STEPS-1 are RUNNING with a
growing share of results finished, RUN_STEPS is the run's final state. A seeded run that is
still queued or running moves one step per `get_evaluation_run` poll (the server keeps the
poll count); a finished one stays put. Progress counts, per-evaluation summaries and the results
listed for a run are all derived from the same finished prefix, so they always agree:
passed + failed + error over the summaries equals the progress counts, and
completedCount == passedCount + failedCount.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pipelines.ces.simulator.corpus.catalog import AppCatalog, Dataset, Evaluation, Persona, app_catalog
from pipelines.ces.simulator.corpus.protojson import (
    NANOS_PER_MILLI,
    NANOS_PER_SECOND,
    between,
    duration,
    epoch_nanos,
    seeded_random,
    stable_hex,
    timestamp,
)
from pipelines.ces.simulator.corpus.scale import SimulatorScale

RUN_STATES = ("QUEUED", "RUNNING", "COMPLETED", "ERROR", "CANCELLED")
RUN_TYPES = ("GOLDEN", "SCENARIO", "MIXED")
RUN_STEPS = 4
"""A queued run reports RUNNING at steps 1..3 and its final state at step 4."""
OPERATION_TYPE = "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationOperationMetadata"
RESPONSE_TYPE = "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationResponse"

_SEEDED_STATE_CYCLE = ("COMPLETED", "ERROR", "RUNNING", "QUEUED", "CANCELLED")
_INITIATORS = (
    "qa-bot@sim-project.iam.gserviceaccount.com",
    "maria.lopez@example.com",
    "dev.team@example.com",
)
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


@dataclass(frozen=True)
class ResultPlan:
    name: str
    evaluation: Evaluation
    outcome: str
    """Final outcome: PASS, FAIL, ERROR or CANCELLED."""
    persona: Persona | None
    finish_offset: int
    """Nanoseconds after the run's creation at which this result finished."""


@dataclass(frozen=True)
class RunPlan:
    """Everything fixed about one evaluation run; `evaluation_run_json` views it at a step."""

    name: str
    app_index: int
    display_name: str
    create_time: int
    evaluation_type: str
    evaluations: tuple[Evaluation, ...]
    dataset: Dataset | None
    results: tuple[ResultPlan, ...]
    personas: tuple[tuple[Persona, int], ...]
    run_count: int
    final_state: str
    start_step: int
    channel: str
    tool_call_behaviour: str
    golden_run_method: str | None
    app_version: tuple[str, str]
    initiated_by: str
    operation: str
    error_style: str | None
    """For ERROR runs: "info" (errorInfo) or "status" (only the deprecated `error`)."""
    scheduled_by: str | None
    changelog: bool
    optimization: bool
    length: int
    """Nanoseconds from creation to the final state."""

    def state_at(self, step: int) -> str:
        if step <= 0:
            return "QUEUED"
        return "RUNNING" if step < RUN_STEPS else self.final_state

    def finished_at(self, step: int) -> int:
        """How many results (a prefix of `results`) have their final outcome at `step`."""
        return len(self.results) if step >= RUN_STEPS else len(self.results) * max(step, 0) // RUN_STEPS

    def update_time(self, step: int) -> int:
        return self.create_time + self.length * min(max(step, 0), RUN_STEPS) // RUN_STEPS


@dataclass(frozen=True)
class RunRequest:
    """What `run_evaluation` asked for, after names were resolved against the catalog."""

    app_index: int
    sequence: int
    """A per-server counter: every call creates a new, distinct run."""
    evaluations: tuple[Evaluation, ...]
    dataset: Dataset | None
    display_name: str
    app_version: tuple[str, str] | None
    """(resource name, display name) from the catalog; None means the latest version."""
    create_time: int


def _run_type(evaluations: tuple[Evaluation, ...]) -> str:
    kinds = {evaluation.kind for evaluation in evaluations}
    return kinds.pop() if len(kinds) == 1 else "MIXED"


def _plan(
    catalog: AppCatalog,
    rng: random.Random,
    *,
    name: str,
    app_index: int,
    create_time: int,
    evaluations: tuple[Evaluation, ...],
    dataset: Dataset | None,
    final_state: str,
    start_step: int,
    operation: str,
    display_name: str,
    app_version: tuple[str, str],
    error_style: str | None,
    scheduled_by: str | None,
) -> RunPlan:
    """The common planning of seeded and requested runs: outcomes, personas, config."""
    run_count = between(rng, 1, 3)
    scenario = any(evaluation.kind == "SCENARIO" for evaluation in evaluations)
    personas = (
        tuple((persona, between(rng, 1, 3)) for persona in rng.sample(catalog.personas, between(rng, 1, 2)))
        if scenario
        else ()
    )
    length = between(rng, 4 * 60, 50 * 60) * NANOS_PER_SECOND
    slots = [(evaluation, repeat) for evaluation in evaluations for repeat in range(run_count)]
    outcomes = rng.choices(("PASS", "FAIL", "ERROR"), (68, 22, 10), k=len(slots))
    if final_state == "ERROR" and "ERROR" not in outcomes:
        outcomes[-1] = "ERROR"
    if final_state == "CANCELLED":
        kept = max(1, len(outcomes) * 3 // 5)
        outcomes[kept:] = ["CANCELLED"] * (len(outcomes) - kept)
    results = tuple(
        ResultPlan(
            name=f"{evaluation.name}/results/{stable_hex(name, position, length=12)}",
            evaluation=evaluation,
            outcome=outcome,
            persona=personas[position % len(personas)][0]
            if personas and evaluation.kind == "SCENARIO"
            else None,
            finish_offset=length * (position + 1) // (len(slots) + 1),
        )
        for position, ((evaluation, _), outcome) in enumerate(zip(slots, outcomes, strict=True))
    )
    run_type = _run_type(evaluations)
    return RunPlan(
        name=name,
        app_index=app_index,
        display_name=display_name,
        create_time=create_time,
        evaluation_type=run_type,
        evaluations=evaluations,
        dataset=dataset,
        results=results,
        personas=personas,
        run_count=run_count,
        final_state=final_state,
        start_step=start_step,
        channel="AUDIO" if rng.random() < 0.3 else "TEXT",
        tool_call_behaviour="FAKE" if rng.random() < 0.3 else "REAL",
        golden_run_method=rng.choice(("STABLE", "NAIVE")) if run_type != "SCENARIO" else None,
        app_version=app_version,
        initiated_by=rng.choice(_INITIATORS),
        operation=operation,
        error_style=error_style,
        scheduled_by=scheduled_by,
        changelog=rng.random() < 0.3,
        optimization=final_state == "COMPLETED" and rng.random() < 0.4,
        length=length,
    )


def _pick_evaluations(catalog: AppCatalog, rng: random.Random, run_type: str) -> tuple[Evaluation, ...]:
    golden = [e for e in catalog.evaluations if e.kind == "GOLDEN"]
    scenario = [e for e in catalog.evaluations if e.kind == "SCENARIO"]
    if run_type == "GOLDEN":
        return tuple(rng.sample(golden, between(rng, 2, len(golden))))
    if run_type == "SCENARIO":
        return tuple(rng.sample(scenario, between(rng, 1, len(scenario))))
    return tuple(rng.sample(golden, between(rng, 1, 2)) + rng.sample(scenario, 1))


def operation_name(scale: SimulatorScale, operation_id: str) -> str:
    return f"{scale.location_name}/operations/{operation_id}"


@lru_cache(maxsize=64)
def seeded_runs(scale: SimulatorScale, app_index: int) -> tuple[RunPlan, ...]:
    """The evaluation runs an app already has when the server starts, oldest first.

    States and types cycle over a run's position across all apps, so every state and every
    type appears once there are five runs in total; every third ERROR run carries only the
    deprecated `error` Status, the others `errorInfo`.
    """
    catalog = app_catalog(scale, app_index)
    count = scale.evaluation_runs_per_app
    window_start = epoch_nanos(scale.start_date)
    window_length = epoch_nanos(scale.end_date) - window_start
    plans = []
    for i in range(count):
        ordinal = app_index * count + i
        rng = seeded_random(scale.seed, "evaluation-run", catalog.app_name, i)
        state = _SEEDED_STATE_CYCLE[ordinal % len(_SEEDED_STATE_CYCLE)]
        run_type = RUN_TYPES[ordinal % len(RUN_TYPES)]
        dataset = catalog.datasets[RUN_TYPES.index(run_type)] if ordinal % 4 == 1 else None
        evaluations = dataset.evaluations if dataset else _pick_evaluations(catalog, rng, run_type)
        run_id = f"{scale.start_date:%Y%m%d}-{i:03d}-{stable_hex(scale.seed, catalog.app_name, i, length=6)}"
        moving = state in ("QUEUED", "RUNNING")
        create_time = (
            window_start
            + window_length * (i + 1) // (count + 1)
            + between(rng, 0, 3_600_000) * NANOS_PER_MILLI
        )
        version = catalog.versions[min(len(catalog.versions) - 1, i * len(catalog.versions) // max(count, 1))]
        error_rank = ordinal // len(_SEEDED_STATE_CYCLE)
        plans.append(
            _plan(
                catalog,
                rng,
                name=f"{catalog.app_name}/evaluationRuns/{run_id}",
                app_index=app_index,
                create_time=create_time,
                evaluations=evaluations,
                dataset=dataset,
                final_state="COMPLETED" if moving else state,
                start_step={"QUEUED": 0, "RUNNING": 2}.get(state, RUN_STEPS),
                operation=operation_name(
                    scale, stable_hex(scale.seed, "operation", catalog.app_name, i, length=16)
                ),
                display_name=f"{'Nightly' if i % 2 else 'Release'} regression #{i + 1}",
                app_version=version,
                error_style=("status" if error_rank % 3 == 1 else "info") if state == "ERROR" else None,
                scheduled_by=f"{catalog.app_name}/scheduledEvaluationRuns/nightly" if i % 2 else None,
            )
        )
    return tuple(plans)


def requested_run(scale: SimulatorScale, request: RunRequest) -> RunPlan:
    """The plan of a run started by `run_evaluation`: queued now, completing as it is polled."""
    catalog = app_catalog(scale, request.app_index)
    rng = seeded_random(scale.seed, "requested-run", catalog.app_name, request.sequence)
    run_id = (
        f"run-{request.sequence:05d}-{stable_hex(scale.seed, catalog.app_name, request.sequence, length=6)}"
    )
    return _plan(
        catalog,
        rng,
        name=f"{catalog.app_name}/evaluationRuns/{run_id}",
        app_index=request.app_index,
        create_time=request.create_time,
        evaluations=request.evaluations,
        dataset=request.dataset,
        final_state="COMPLETED",
        start_step=0,
        operation=operation_name(scale, stable_hex(scale.seed, "requested-operation", run_id, length=16)),
        display_name=request.display_name,
        app_version=request.app_version or catalog.versions[-1],
        error_style=None,
        scheduled_by=None,
    )


# ---------------------------------------------------------------------------------------- views
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
    if plan.changelog:
        out["changelog"] = f"Update instructions of {catalog.root_agent.display_name}"
        out["changelogCreateTime"] = timestamp(plan.create_time - 3 * 3_600 * NANOS_PER_SECOND)
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


def _outcome_detail(result: ResultPlan, rng: random.Random, catalog: AppCatalog) -> dict[str, Any]:
    passed = result.outcome == "PASS"
    if result.evaluation.kind == "GOLDEN":
        return {
            "goldenResult": {
                "turnReplayResults": [
                    {
                        "turnLatency": duration(between(rng, 600, 4_000) * NANOS_PER_MILLI),
                        "semanticSimilarityResult": {
                            "score": between(rng, 3, 4) if passed else between(rng, 0, 2),
                            "outcome": "PASS" if passed else "FAIL",
                        },
                        "toolInvocationScore": round(
                            rng.uniform(0.8, 1.0) if passed else rng.uniform(0.0, 0.7), 3
                        ),
                    }
                    for _ in range(between(rng, 1, 4))
                ]
            }
        }
    return {
        "scenarioResult": {
            "task": rng.choice(catalog.user_texts),
            "taskCompletionResult": {
                "score": 1 if passed else 0,
                "label": "completed" if passed else "not completed",
            },
            "allExpectationsSatisfied": passed,
            "taskCompleted": passed,
        }
    }


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


def evaluation_results_json(plan: RunPlan, step: int, catalog: AppCatalog) -> list[dict[str, Any]]:
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
            persona = result.persona
            item["persona"] = {
                "name": persona.name,
                "description": persona.description,
                "displayName": persona.display_name,
                "personality": persona.personality,
            }
        if done and result.outcome == "ERROR":
            error_type, message = rng.choice(_ERROR_TYPES)
            info = {"errorType": error_type} if error_type else {}
            info["errorMessage"] = message
            info["sessionId"] = f"session-{stable_hex(result.name, length=12)}"
            item["errorInfo"] = info
        item["initiatedBy"] = plan.initiated_by
        item["appVersion"], item["appVersionDisplayName"] = plan.app_version
        item["executionState"] = state
        item["config"] = _config(plan)
        if plan.golden_run_method and result.evaluation.kind == "GOLDEN":
            item["goldenRunMethod"] = plan.golden_run_method
        if state == "COMPLETED":
            item.update(_outcome_detail(result, rng, catalog))
        out.append(item)
    return out


def operation_json(plan: RunPlan, done: bool) -> dict[str, Any]:
    """Proto3 JSON of the google.longrunning.Operation that created `plan` (`done` false is omitted)."""
    metadata: dict[str, Any] = {
        "@type": OPERATION_TYPE,
        "evaluations": [evaluation.name for evaluation in plan.evaluations],
        "evaluationRun": plan.name,
        "createTime": timestamp(plan.create_time),
    }
    if done:
        metadata["endTime"] = timestamp(plan.create_time + plan.length // RUN_STEPS)
    metadata["verb"] = "create"
    out: dict[str, Any] = {"name": plan.operation, "metadata": metadata}
    if done:
        out["done"] = True
        out["response"] = {"@type": RESPONSE_TYPE, "evaluationRun": plan.name}
    return out
