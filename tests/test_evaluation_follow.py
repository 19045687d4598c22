"""Following evaluation runs to completion with the sensor, against the simulator over HTTP."""

from __future__ import annotations

import dataclasses
import json
import time
from contextlib import ExitStack
from pathlib import Path

import dagster as dg
from dagster_runs import run_app_job

from pipelines.ces.simulator import SimulatorConfig, SimulatorHandle, SimulatorScale, running_simulator
from pipelines.config import Settings
from pipelines.definitions import build_definitions
from pipelines.ingest.evaluations import STARTED_RUNS_STATE, replay_observations
from pipelines.lake.store import Lake
from pipelines.orchestration.evaluation_assets import (
    follow_due,
    started_evaluation_sensor,
    unfinished_evaluation_runs_sensor,
)
from pipelines.orchestration.partitions import register_apps
from pipelines.orchestration.resources import resources_from_settings
from pipelines.orchestration.runs import QUIET_LOGS
from pipelines.transform.schemas import REFUSED_RUN
from pipelines.warehouse.duck import Warehouse

SCALE = SimulatorScale(seed=9, apps=1, days=1, conversations_per_day=1, evaluation_runs_per_app=6)


def point_at(sim: SimulatorHandle, tmp_path: Path, warehouse: Warehouse, monkeypatch) -> None:
    """Configure the pipeline for the simulator's first app, a lake and a warehouse in tmp_path."""
    for key, value in {
        "CES_MCP_URL": sim.url,
        "CES_APPS": sim.apps[0],
        "CES_LAKE": str(tmp_path / "lake"),
        "CES_WAREHOUSE": warehouse.path,
        "CES_MAX_RPS": "500",
    }.items():
        monkeypatch.setenv(key, value)


def test_the_sensor_follows_unfinished_runs_until_they_complete(tmp_path: Path, monkeypatch) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with ExitStack() as stack:
        sim = stack.enter_context(running_simulator(SimulatorConfig(scale=SCALE)))
        point_at(sim, tmp_path, warehouse, monkeypatch)
        definitions = build_definitions(Settings.from_env())
        instance = stack.enter_context(dg.instance_for_test())
        assert all(o.success for o in run_app_job("ingest_evaluation_runs", sim.apps, instance=instance))
        unfinished = warehouse.unfinished_evaluation_runs()
        assert unfinished, "the simulator serves queued and running runs"

        resources = resources_from_settings(Settings.from_env())  # whose lifecycles the context holds
        context = stack.enter_context(dg.build_sensor_context(instance=instance, resources=resources))
        job = definitions.resolve_job_def("ingest_evaluation_runs")
        ticks = 0
        while True:
            result = unfinished_evaluation_runs_sensor(context)
            if isinstance(result, dg.SkipReason):
                break
            (request,) = result.run_requests
            assert request.partition_key == sim.apps[0]
            assert request.tags["dagster/max_runtime"] == "86400"  # a hung fetch holds its app a day at most
            names = request.run_config["ops"]["raw__evaluation_runs"]["config"]["names"]
            assert names == sorted(name for _, name in warehouse.unfinished_evaluation_runs())
            run_config = {**request.run_config, **QUIET_LOGS}
            assert job.execute_in_process(
                run_config=run_config, instance=instance, partition_key=request.partition_key
            ).success
            ticks += 1
            assert ticks < 20, "runs never finished"
        assert "no evaluation run of the configured apps is unfinished" in result.skip_message
        assert warehouse.unfinished_evaluation_runs() == []

    followed = [name for _, name in unfinished]
    with warehouse.connect(read_only=True) as conn:
        final = dict(
            conn.execute(
                "SELECT evaluation_run_name, state FROM evaluation_runs WHERE evaluation_run_name IN "
                "(SELECT unnest(?::VARCHAR[]))",
                [followed],
            ).fetchall()
        )
        assert set(final.values()) <= {"COMPLETED", "ERROR", "CANCELLED"} and len(final) == len(followed)
        history = conn.execute(
            "SELECT evaluation_run_name, list(state ORDER BY observed_at), "
            "list(completed_count ORDER BY observed_at) FROM evaluation_run_snapshots GROUP BY 1"
        ).fetchall()
    progressed = {name: (states, counts) for name, states, counts in history if name in followed}
    for name, (states, counts) in progressed.items():
        assert states[-1] == final[name]
        assert counts == sorted(counts), f"progress went backwards for {name}"
        assert len(states) >= 2
    assert any(
        states[0] in ("QUEUED", "RUNNING") and states[-1] == "COMPLETED" for states, _ in progressed.values()
    )


def test_a_run_started_by_the_job_is_loaded_by_the_sensor_it_triggers(tmp_path: Path, monkeypatch) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        point_at(sim, tmp_path, warehouse, monkeypatch)
        definitions = build_definitions(Settings.from_env())
        with dg.instance_for_test() as instance:
            register_apps(instance, sim.apps)
            config = {
                "app": sim.apps[0],
                "evaluations": ["refund-happy-path"],
                "display_name": "from the job",
            }
            started = definitions.resolve_job_def("start_evaluation_job").execute_in_process(
                run_config={"ops": {"start_evaluation_op": {"config": config}}, **QUIET_LOGS},
                instance=instance,
            )
            assert started.success
            run_name = started.output_for_node("start_evaluation_op")
            context = dg.build_run_status_sensor_context(
                sensor_name="started_evaluation_sensor",
                dagster_instance=instance,
                dagster_run=started.dagster_run,
                dagster_event=started.get_run_success_event(),
            )
            request = started_evaluation_sensor(context)
            assert request.partition_key == sim.apps[0]
            assert request.tags["dagster/max_runtime"] == "86400"
            ingest = definitions.resolve_job_def("ingest_evaluation_runs").execute_in_process(
                run_config={**request.run_config, **QUIET_LOGS},
                instance=instance,
                partition_key=request.partition_key,
            )
            assert ingest.success
    with warehouse.connect(read_only=True) as conn:
        rows = conn.execute(
            "SELECT display_name FROM evaluation_runs WHERE evaluation_run_name = ?", [run_name]
        ).fetchall()
    assert rows == [("from the job",)]


def test_due_follows_every_tick_at_first_then_less_often_up_to_half_an_hour() -> None:
    now = 1_000_000.0
    assert follow_due(now - 200, now - 1, now)  # followed under five minutes: every tick
    assert not follow_due(now - 3600, now - 300, now)  # an hour: every 6 minutes
    assert follow_due(now - 3600, now - 360, now)
    assert not follow_due(now - 7 * 86400, now - 1700, now)  # a week: every half hour, no less
    assert follow_due(now - 7 * 86400, now - 1800, now)


def test_runs_unfinished_for_long_are_fetched_less_often_and_a_new_one_at_once(
    tmp_path: Path, monkeypatch
) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim, dg.instance_for_test() as instance:
        point_at(sim, tmp_path, warehouse, monkeypatch)
        assert all(o.success for o in run_app_job("ingest_evaluation_runs", sim.apps, instance=instance))
        names = [name for _, name in warehouse.unfinished_evaluation_runs()]
        resources = resources_from_settings(Settings.from_env())
        now = time.time()

        def tick(since: dict[str, float], fetched: float) -> dg.SensorResult | dg.SkipReason:
            cursor = json.dumps({"since": since, "fetched": {sim.apps[0]: fetched}})
            with dg.build_sensor_context(instance=instance, resources=resources, cursor=cursor) as context:
                return unfinished_evaluation_runs_sensor(context)

        two_hours = dict.fromkeys(names, now - 7200)
        assert "not yet due" in tick(two_hours, now - 60).skip_message  # waits 12 minutes
        assert len(tick(two_hours, now - 13 * 60).run_requests) == 1
        newly_seen = {**two_hours, names[0]: now - 10}
        assert len(tick(newly_seen, now - 60).run_requests) == 1
        assert len(tick({}, now - 60).run_requests) == 1  # none seen before: at once


def test_a_run_gone_from_ces_is_a_reject_and_no_longer_followed(tmp_path: Path, monkeypatch) -> None:
    """Runs deleted from CES after they were seen (here: another simulator, whose runs are
    others): the fetch that asks for them loads, each is a reject naming NOT_FOUND, and the
    sensor stops following them. A run started here and then deleted does not block the app."""
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    elsewhere = SimulatorConfig(scale=dataclasses.replace(SCALE, seed=SCALE.seed + 1))
    with ExitStack() as stack:
        instance = stack.enter_context(dg.instance_for_test())
        with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
            point_at(sim, tmp_path, warehouse, monkeypatch)
            assert all(o.success for o in run_app_job("ingest_evaluation_runs", sim.apps, instance=instance))
            (app,) = sim.apps
        unfinished = [name for _, name in warehouse.unfinished_evaluation_runs()]
        assert unfinished, "the simulator serves queued and running runs"
        started_here = f"{app}/evaluationRuns/started-here-then-deleted"
        state = {"app": app, "operation": f"{app}/operations/o", "evaluation_run": started_here}
        Lake(str(tmp_path / "lake")).write_state(STARTED_RUNS_STATE, state["operation"], state)

        other = stack.enter_context(running_simulator(elsewhere))
        point_at(other, tmp_path, warehouse, monkeypatch)
        assert other.apps == (app,)
        settings = Settings.from_env()
        resources = resources_from_settings(settings)
        context = stack.enter_context(dg.build_sensor_context(instance=instance, resources=resources))
        (request,) = unfinished_evaluation_runs_sensor(context).run_requests
        fetched = (
            build_definitions(settings)
            .resolve_job_def("ingest_evaluation_runs")
            .execute_in_process(
                run_config={**request.run_config, **QUIET_LOGS}, instance=instance, partition_key=app
            )
        )
        assert fetched.success
        (materialization,) = fetched.asset_materializations_for_node("raw__evaluation_runs")
        assert materialization.metadata["evaluation_runs_refused"].value == len(unfinished) + 1
        assert isinstance(unfinished_evaluation_runs_sensor(context), dg.SkipReason)
    with warehouse.connect(read_only=True) as conn:
        rejects = conn.execute(
            "SELECT resource_name, reason, raw_json->>'tool' FROM rejects WHERE source = 'evaluation_run'"
        ).fetchall()
    assert sorted(name for name, _, _ in rejects) == sorted([*unfinished, started_here])
    assert all(reason.startswith(f"{REFUSED_RUN}NOT_FOUND") for _, reason, _ in rejects), rejects
    assert {tool for _, _, tool in rejects} == {"get_evaluation_run"}
    assert warehouse.unfinished_evaluation_runs() == []
    assert Lake(str(tmp_path / "lake")).read_states(STARTED_RUNS_STATE) == []  # gone: settled
    rebuilt = Warehouse(str(tmp_path / "rebuilt.duckdb"))  # the raw lake replayed: the same rejects
    replay_observations(Lake(str(tmp_path / "lake")), rebuilt, app)
    with rebuilt.connect(read_only=True) as conn:
        assert sorted(rejects) == sorted(
            conn.execute(
                "SELECT resource_name, reason, raw_json->>'tool' FROM rejects WHERE source = 'evaluation_run'"
            ).fetchall()
        )
