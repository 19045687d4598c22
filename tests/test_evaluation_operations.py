"""Run timing: the operation of each final evaluation run is fetched once, kept with the run, and
replayed as fetched; a refused operation costs only that run's duration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster_runs import run_app_job
from test_evaluation_follow import SCALE, point_at

from pipelines.ces.client import CesMcpClient
from pipelines.ces.ratelimit import RateLimiter
from pipelines.ces.simulator import SimulatorConfig, running_simulator
from pipelines.ces.simulator.corpus.evaluations import RUN_STEPS, seeded_runs
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ces.tools import GET_OPERATION, get_evaluation_run
from pipelines.config import CesSettings
from pipelines.ingest.evaluations import STARTED_RUNS_STATE, fetch_evaluation_runs
from pipelines.ingest.trigger import start_evaluation
from pipelines.lake.store import Lake
from pipelines.orchestration.evaluation_assets import REPLAY_RUN_CONFIG
from pipelines.warehouse.duck import Warehouse

OPERATIONS_SQL = (
    "SELECT evaluation_run_name, operation_name, done, create_time, end_time, cancel_requested, "
    "error_code, epoch_us(end_time) - epoch_us(create_time) FROM evaluation_run_operations ORDER BY 1"
)

FINISHED_SQL = (
    "SELECT evaluation_run_name FROM evaluation_runs WHERE state IN ('COMPLETED', 'ERROR', 'CANCELLED')"
)
RESULTS_SQL = (
    "SELECT * FROM evaluation_results WHERE evaluation_run_name IN (SELECT unnest(?::VARCHAR[])) ORDER BY ALL"
)


def test_each_final_run_keeps_its_operation_times_fetched_once(tmp_path: Path, monkeypatch) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    final = {plan.name: plan for plan in seeded_runs(SCALE, 0) if plan.start_step >= RUN_STEPS}
    assert {plan.final_state for plan in final.values()} == {"COMPLETED", "ERROR", "CANCELLED"}
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim, dg.instance_for_test() as instance:
        point_at(sim, tmp_path, warehouse, monkeypatch)
        [first] = run_app_job("ingest_evaluation_runs", sim.apps, instance=instance)
        with warehouse.connect(read_only=True) as conn:
            stored = conn.execute(OPERATIONS_SQL).fetchall()
            finished = {name for (name,) in conn.execute(FINISHED_SQL).fetchall()}
            results = conn.execute(RESULTS_SQL, [sorted(finished)]).fetchall()
        # One of them as `evaluate` records a run it started: fetched until stored final, then
        # kept as a record that fetches no longer read.
        lake = Lake(str(tmp_path / "lake"))
        started = {
            "app": sim.apps[0],
            "operation": f"{sim.apps[0]}/operations/o",
            "evaluation_run": min(final),
        }
        lake.write_state(STARTED_RUNS_STATE, started["operation"], started)
        [again] = run_app_job("ingest_evaluation_runs", sim.apps, instance=instance)
        assert lake.read_states(STARTED_RUNS_STATE) == []
        (settled,) = lake.fs.glob(f"{lake.root}/state/{STARTED_RUNS_STATE}/done/*.json")
        assert json.loads(lake.fs.cat(settled)) == started
        with warehouse.connect(read_only=True) as conn:
            assert conn.execute(RESULTS_SQL, [sorted(finished)]).fetchall() == results
        [replayed] = run_app_job(
            "rebuild_evaluation_runs",
            sim.apps,
            instance=instance,
            run_config=REPLAY_RUN_CONFIG.to_config_dict(),
        )
    assert first.success and again.success and replayed.success
    assert first.value("raw__evaluation_runs", "operations") == len(final)
    assert again.value("raw__evaluation_runs", "operations") == 0  # already stored as done: no call
    # A run stored final is neither fetched again nor its results listed: two calls a run saved,
    # its results kept as loaded.
    assert finished >= set(final) and results
    assert again.value("raw__evaluation_runs", "evaluation_runs_already_final") == len(finished)
    assert again.value("raw__evaluation_runs", "evaluation_runs") == len(seeded_runs(SCALE, 0)) - len(
        finished
    )
    assert again.value("raw__evaluation_runs", "requests") <= first.value(
        "raw__evaluation_runs", "requests"
    ) - 2 * len(finished)
    expected_errors = {"COMPLETED": None, "ERROR": 13, "CANCELLED": 1}
    assert [
        (name, operation, done, cancel, code, micros)
        for name, operation, done, _, _, cancel, code, micros in stored
    ] == [
        (
            plan.name,
            plan.operation,
            True,
            plan.final_state == "CANCELLED",
            expected_errors[plan.final_state],
            plan.length // 1000,  # the run's whole length, created to final
        )
        for plan in sorted(final.values(), key=lambda plan: plan.name)
    ]
    with warehouse.connect(read_only=True) as conn:
        assert conn.execute(OPERATIONS_SQL).fetchall() == stored  # replaying both fetches: the same rows
        assert conn.execute(RESULTS_SQL, [sorted(finished)]).fetchall() == results
        headers = conn.execute(
            "SELECT evaluation_run_name, run_seconds FROM evaluation_run_headers "
            "WHERE run_seconds IS NOT NULL"
        ).fetchall()
    assert sorted(headers) == [(row[0], row[-1] / 1e6) for row in stored]


class RefusingOne:
    """A client whose get_operation of `refused` asks the server for an operation it never had."""

    def __init__(self, client: CesMcpClient, refused: str):
        self._client = client
        self.refused = refused

    def has_tool(self, name: str) -> bool:
        return self._client.has_tool(name)

    def call_tool(self, name: str, arguments: Any = None, *, idempotent: bool | None = None) -> Any:
        if name == GET_OPERATION and arguments == {"name": self.refused}:
            arguments = {"name": f"{self.refused}-expired"}
        return self._client.call_tool(name, arguments, idempotent=idempotent)


def test_a_refused_operation_is_reported_and_the_rest_are_kept(tmp_path: Path) -> None:
    final = sorted(plan.operation for plan in seeded_runs(SCALE, 0) if plan.start_step >= RUN_STEPS)
    lake = Lake(str(tmp_path / "lake"))
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        settings = CesSettings(mcp_url=sim.url, retry_backoff_seconds=0.01)
        with CesMcpClient(settings, rate_limiter=RateLimiter(1_000_000)) as client:
            refusing = RefusingOne(client, final[0])
            fetched = fetch_evaluation_runs(
                refusing,  # type: ignore[arg-type]
                lake,
                sim.apps[0],
                finished_operations={final[1]},
            )
    assert fetched.operations == len(final) - 2
    assert len(fetched.operations_unavailable) == 1
    assert (
        fetched.operations_unavailable[0].startswith(f"{final[0]}: ")
        and "NOT_FOUND" in fetched.operations_unavailable[0]
    )
    asked = {r["arguments"]["name"] for r in lake.read_jsonl(fetched.path) if r["tool"] == GET_OPERATION}
    assert asked == set(final[2:])


@pytest.mark.parametrize("late", [False, True], ids=["named-at-once", "named-once-done"])
def test_a_started_evaluation_is_followed_until_its_operation_names_the_run(
    tmp_path: Path, late: bool
) -> None:
    """The reference documents neither the metadata nor the response of `run_evaluation`'s
    operation: a server whose operation names its run only once done (`late-run-name`) is polled
    with `get_operation` until it does; the start is recorded in the lake, then with its run."""
    faults = SimulatedFaults("late-run-name:1") if late else None
    config = SimulatorConfig(scale=SCALE, faults=faults, run_step_seconds=0.05)
    lake = Lake(str(tmp_path / "lake"))
    operations: list[str] = []
    with (
        running_simulator(config) as sim,
        CesMcpClient(CesSettings(mcp_url=sim.url), rate_limiter=RateLimiter(1_000_000)) as client,
    ):
        started = start_evaluation(
            client,
            lake,
            sim.apps[0],
            evaluations=["refund-happy-path"],
            poll_seconds=0.05,
            on_operation=operations.append,
        )
        run = get_evaluation_run(client, started.evaluation_run)
    assert operations == [started.operation] and run["operation"] == started.operation
    assert started.evaluation_run.startswith(f"{sim.apps[0]}/evaluationRuns/")
    assert (started.polls > 0) is late  # named at once: no poll
    (state,) = lake.read_states(STARTED_RUNS_STATE)
    assert (state["operation"], state["evaluation_run"]) == (started.operation, started.evaluation_run)
