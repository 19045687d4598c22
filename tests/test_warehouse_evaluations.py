"""Evaluation runs in the warehouse: upsert by run, snapshots only on change, replay of records."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from conversation_samples import APP
from test_flatten_evaluations import RUN, completed_run

from pipelines.ingest.evaluations import (
    EvaluationObservation,
    load_evaluation_observation,
    replay_evaluation_records,
)
from pipelines.protojson.timeparse import parse_timestamp_micros
from pipelines.warehouse.duck import Warehouse

DAY = date(2026, 11, 2)
T1 = parse_timestamp_micros("2026-11-02T03:05:00Z")
T2 = parse_timestamp_micros("2026-11-02T03:35:00Z")


def running_run() -> dict:
    run = completed_run()
    run.update(state="RUNNING", progress={"totalCount": 10, "passedCount": 2, "completedCount": 2})
    run["evaluationRunSummaries"] = {f"{APP}/evaluations/e1": {"passedCount": 2}}
    del run["latencyReport"]
    return run


def table(warehouse: Warehouse, sql: str) -> list[tuple]:
    with warehouse.connect(read_only=True) as conn:
        return conn.execute(sql).fetchall()


def test_runs_are_replaced_and_snapshots_appended_only_on_change(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    running = EvaluationObservation(runs=[(running_run(), T1)])
    load_evaluation_observation(warehouse, APP, running, DAY)
    load_evaluation_observation(warehouse, APP, running, DAY)
    assert table(warehouse, "SELECT state, passed_count FROM evaluation_runs") == [("RUNNING", 2)]
    assert table(warehouse, "SELECT count(*) FROM evaluation_run_summaries") == [(1,)]
    assert table(warehouse, "SELECT count(*) FROM evaluation_run_snapshots") == [(1,)]
    assert warehouse.unfinished_evaluation_runs() == [(APP, RUN)]

    done = EvaluationObservation(runs=[(completed_run(), T2)])
    written = load_evaluation_observation(warehouse, APP, done, DAY)
    assert written["evaluation_run_latencies"] == 5 and written["evaluation_run_snapshots"] == 1
    load_evaluation_observation(warehouse, APP, done, DAY)
    load_evaluation_observation(warehouse, APP, running, DAY)  # an older observation changes nothing
    assert table(warehouse, "SELECT state, passed_count FROM evaluation_runs") == [("COMPLETED", 6)]
    assert table(warehouse, "SELECT count(*) FROM evaluation_run_summaries") == [(2,)]
    assert table(warehouse, "SELECT count(*) FROM evaluation_run_latencies") == [(5,)]
    assert table(
        warehouse, "SELECT state, passed_count FROM evaluation_run_snapshots ORDER BY observed_at"
    ) == [
        ("RUNNING", 2),
        ("COMPLETED", 6),
    ]
    assert warehouse.unfinished_evaluation_runs() == []


def test_rejected_runs_and_results_are_recorded(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    bad = dict(completed_run(), name=f"{APP}/evaluationRuns/bad", createTime="yesterday")
    observation = EvaluationObservation(runs=[(bad, T1), (completed_run(), T1)], results=[{"name": "?"}])
    written = load_evaluation_observation(warehouse, APP, observation, DAY)
    assert written["evaluation_runs"] == 1 and written["rejects"] == 2
    assert table(warehouse, "SELECT source, resource_name FROM rejects ORDER BY source") == [
        ("evaluation_result", "?"),
        ("evaluation_run", f"{APP}/evaluationRuns/bad"),
    ]
    load_evaluation_observation(warehouse, APP, observation, DAY)
    assert table(warehouse, "SELECT count(*) FROM rejects") == [(2,)]


def test_replay_takes_each_run_from_its_full_fetch_and_leaves_one_only_listed() -> None:
    """A listed run the fetch did not get again is one stored final: not replaced (results and
    all); a listed run without a name, which no get can fetch, is kept for its reject."""
    listed = {"name": RUN, "state": "RUNNING"}
    final = {"name": f"{APP}/evaluationRuns/stored-final", "state": "COMPLETED"}
    unnamed = {"state": "COMPLETED"}
    records = [
        {
            "tool": "list_evaluation_runs",
            "arguments": {},
            "result": {"evaluationRuns": [listed, final, unnamed]},
            "fetched_at": "2026-11-02T03:00:00Z",
        },
        {
            "tool": "get_evaluation_run",
            "arguments": {"name": RUN},
            "result": completed_run(),
            "fetched_at": "2026-11-02T03:00:01Z",
        },
        {
            "tool": "list_evaluation_results",
            "arguments": {},
            "result": {"evaluationResults": [{"name": f"{APP}/evaluations/e1/results/r1"}]},
            "fetched_at": "2026-11-02T03:00:02Z",
        },
    ]
    observation = replay_evaluation_records(records)
    assert observation.runs == [
        (completed_run(), parse_timestamp_micros("2026-11-02T03:00:01Z")),
        (unnamed, parse_timestamp_micros("2026-11-02T03:00:00Z")),
    ]
    assert observation.results == [{"name": f"{APP}/evaluations/e1/results/r1"}]


def test_a_run_in_a_state_this_version_does_not_know_is_followed_until_it_finishes(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    runs = []
    for suffix, state in [
        ("done", "COMPLETED"),
        ("failed", "ERROR"),
        ("stopped", "CANCELLED"),
        ("busy", "RUNNING"),
        ("waiting", "QUEUED"),
        ("new", "AWAITING_APPROVAL"),
        ("blank", None),
    ]:
        run = completed_run()
        run["name"] = f"{APP}/evaluationRuns/{suffix}"
        if state is None:
            del run["state"]
        else:
            run["state"] = state
        runs.append((run, T1))
    load_evaluation_observation(warehouse, APP, EvaluationObservation(runs=runs), DAY)
    followed = sorted(name.rsplit("/", 1)[1] for _, name in warehouse.unfinished_evaluation_runs())
    assert followed == ["blank", "busy", "new", "waiting"]
