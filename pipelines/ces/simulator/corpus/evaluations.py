"""Synthetic evaluation runs, their results, and the long-running operations that start them.

Each run is planned once (`RunPlan`: its evaluations, every result's final outcome, its config)
and then viewed at a progress step (evaluation_json.py): step 0 is QUEUED, steps
1..RUN_STEPS-1 are RUNNING with a growing share of results finished, RUN_STEPS is the run's
final state. A seeded run that is still queued or running moves one step per
`get_evaluation_run` poll (the server keeps the poll count); a finished one stays put. Progress
counts, per-evaluation summaries and the results listed for a run are all derived from the same
finished prefix, so they always agree: passed + failed + error over the summaries equals the
progress counts, and completedCount == passedCount + failedCount.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from pipelines.ces.simulator.corpus.catalog import AppCatalog, Dataset, Evaluation, Persona, app_catalog
from pipelines.ces.simulator.corpus.protojson import (
    NANOS_PER_MILLI,
    NANOS_PER_SECOND,
    between,
    epoch_nanos,
    seeded_random,
    stable_hex,
)
from pipelines.ces.simulator.corpus.scale import SimulatorScale

RUN_STATES = ("QUEUED", "RUNNING", "COMPLETED", "ERROR", "CANCELLED")
RUN_TYPES = ("GOLDEN", "SCENARIO", "MIXED")
RUN_STEPS = 4
"""A queued run reports RUNNING at steps 1..3 and its final state at step 4."""

_SEEDED_STATE_CYCLE = ("COMPLETED", "ERROR", "RUNNING", "QUEUED", "CANCELLED")
_INITIATORS = (
    "qa-bot@sim-project.iam.gserviceaccount.com",
    "maria.lopez@example.com",
    "dev.team@example.com",
)


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

    def result_start(self, result: ResultPlan) -> int:
        """When `result` began (ns): its replay's clock starts there."""
        return self.create_time + result.finish_offset // 4


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
    length: int
    """Nanoseconds from creation to the final state: as long as the server's clock takes to move
    the run through its steps, so no time the run reports lies past when its clock ends it."""


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
    failing: Evaluation | None = None,
    length: int | None = None,
) -> RunPlan:
    """The common planning of seeded and requested runs: outcomes, personas, config. `failing`:
    an evaluation whose every result fails (a regression); `length`: the run's, instead of one
    drawn (a seeded run's: 4 to 50 minutes; drawn either way, so the draws after it stay put)."""
    run_count = between(rng, 1, 3)
    scenario = any(evaluation.kind == "SCENARIO" for evaluation in evaluations)
    personas = (
        tuple((persona, between(rng, 1, 3)) for persona in rng.sample(catalog.personas, between(rng, 1, 2)))
        if scenario
        else ()
    )
    drawn = between(rng, 4 * 60, 50 * 60) * NANOS_PER_SECOND
    length = drawn if length is None else length
    slots = [(evaluation, repeat) for evaluation in evaluations for repeat in range(run_count)]
    outcomes = rng.choices(("PASS", "FAIL", "ERROR"), (68, 22, 10), k=len(slots))
    outcomes = [
        "FAIL" if evaluation == failing else outcome
        for (evaluation, _), outcome in zip(slots, outcomes, strict=True)
    ]
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
    deprecated `error` Status, the others `errorInfo`. An app with more runs than there are
    states (the default, 6: every state is among its first five) ends with a completed rerun of
    its latest completed run's evaluations, on a newer version, in which one evaluation that
    passed there now fails: the newest results show a regression.
    """
    catalog = app_catalog(scale, app_index)
    count = scale.evaluation_runs_per_app
    states = [_SEEDED_STATE_CYCLE[(app_index * count + i) % len(_SEEDED_STATE_CYCLE)] for i in range(count)]
    completed = [i for i, state in enumerate(states[:-1]) if state == "COMPLETED"]
    rerun_of = completed[-1] if completed and count > len(_SEEDED_STATE_CYCLE) else None
    if rerun_of is not None:
        states[-1] = "COMPLETED"
    window_start = epoch_nanos(scale.start_date)
    window_length = epoch_nanos(scale.end_date) - window_start
    plans = []
    for i in range(count):
        ordinal = app_index * count + i
        rng = seeded_random(scale.seed, "evaluation-run", catalog.app_name, i)
        state = states[i]
        run_type = RUN_TYPES[ordinal % len(RUN_TYPES)]
        dataset = catalog.datasets[RUN_TYPES.index(run_type)] if ordinal % 4 == 1 else None
        evaluations = dataset.evaluations if dataset else _pick_evaluations(catalog, rng, run_type)
        failing = None
        if rerun_of is not None and i == count - 1:
            base = plans[rerun_of]
            dataset, evaluations = base.dataset, base.evaluations
            passed = [result.evaluation for result in base.results if result.outcome == "PASS"]
            failing = passed[0] if passed else None
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
                failing=failing,
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
        length=request.length,
    )
