"""Dagster beyond one machine, really run: an instance on PostgreSQL (`scale/dagster.yaml`), the
QueuedRunCoordinator and a `dagster-daemon`. With the daemon serving the instance, `ces-pipeline
ingest` queues its runs, the daemon launches them side by side, and the CLI follows them to the
end with its usual summary and exit code; the request budget is shared through PostgreSQL."""

from __future__ import annotations

import gzip
import json
import shutil
import uuid
from collections.abc import Iterator
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import dagster as dg
import pytest
from test_cli import ROOT, base_env, cli

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.orchestration.dagster_private import run_coordinator
from pipelines.orchestration.partitions import RANGE_START_TAG
from pipelines.warehouse.duck import Warehouse
from scale.servers import create_database, dagster_daemon, dagster_instance_at, libpq_url

SCALE = SimulatorScale(
    seed=23, apps=2, days=2, conversations_per_day=30, max_turns=3, evaluation_runs_per_app=1
)
WINDOW = ("--since", "2026-11-01", "--until", "2026-11-03")
MAX_RPS = 3.0
"""Low enough that each run's ~22 requests outlast the few seconds between two runs' launches."""
MISSING = "projects/simulated/locations/us/apps/missing-app"


@pytest.fixture(scope="module")
def queued_home(
    tmp_path_factory: pytest.TempPathFactory, postgres: str
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A work folder whose instance is on PostgreSQL with a live daemon; the environment for it.
    The module's tests share it (a daemon takes seconds to start and stop): each asserts on its
    own job's runs."""
    tmp_path = tmp_path_factory.mktemp("queued")
    home = tmp_path / "dagster_home"
    home.mkdir()
    for name in ("dagster.yaml", "workspace.yaml"):
        shutil.copy(ROOT / "scale" / name, home / name)
    suffix = uuid.uuid4().hex[:8]
    env = base_env(tmp_path) | {
        "DAGSTER_POSTGRES_URL": libpq_url(
            create_database(postgres, f"dagster_{suffix}"), "postgresql+psycopg2"
        ),
        "CES_RATE_LIMIT_POSTGRES": create_database(postgres, f"budget_{suffix}"),
        "CES_MAX_RPS": f"{MAX_RPS:g}",
        "CES_PAGE_SIZE": "5",
        "CES_QUEUE_RUNS": "true",
    }
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        env |= {"CES_MCP_URL": sim.url, "CES_APPS": ",".join(sim.apps)}
        with dagster_daemon(env, tmp_path / "daemon.log"):
            yield tmp_path, env


def fetch_times(lake: Path) -> list[float]:
    """When every raw conversation response of the lake was received (UNIX seconds), in order."""
    times = []
    for path in lake.glob("raw/conversations/**/*.jsonl.gz"):
        with gzip.open(path, "rt") as lines:
            times += [datetime.fromisoformat(json.loads(line)["fetched_at"]).timestamp() for line in lines]
    return sorted(times)


def test_ingest_queues_its_runs_for_the_daemon_and_follows_them(
    queued_home: tuple[Path, dict[str, str]],
) -> None:
    """Two apps that load and one the server does not know: three runs, queued at once."""
    work, env = queued_home
    apps = [*env["CES_APPS"].split(","), MISSING]
    done = cli("ingest", *WINDOW, "--skip-evaluations", *(f"--app={app}" for app in apps), env=env, cwd=work)
    said = " ".join(done.stderr.split())  # as one line, however the console wrapped it
    assert done.returncode == 1, done.stderr
    assert (
        f"✗ {MISSING} 2026-11-01…2026-11-02: raw__conversation_pages: list_conversations failed: "
        f"NOT_FOUND: app {MISSING} not found"
    ) in said
    assert "1 of 3 runs failed" in said and "Traceback" not in said
    assert Warehouse(env["CES_WAREHOUSE"]).row_counts()["conversations"] == 120

    with dagster_instance_at(env) as instance:
        records = instance.get_run_records(dg.RunsFilter(job_name="ingest_conversations"))
        failed = [r for r in records if MISSING in r.dagster_run.tags[RANGE_START_TAG]]
        loaded = [r for r in records if r not in failed]
        assert len(failed) == 1 and failed[0].dagster_run.status == dg.DagsterRunStatus.FAILURE
        assert len(loaded) == 2 and {r.dagster_run.status for r in loaded} == {dg.DagsterRunStatus.SUCCESS}
        for record in records:  # each went through the queue and was launched by the daemon
            kinds = [
                entry.dagster_event.event_type
                for entry in instance.all_logs(record.dagster_run.run_id)
                if entry.dagster_event is not None
            ]
            assert kinds.index(dg.DagsterEventType.RUN_ENQUEUED) < kinds.index(
                dg.DagsterEventType.RUN_STARTING
            )
        # Runs queued together run side by side: some two of the three overlapped (which two
        # depends on how fast each launch loaded the code location on a busy machine).
        spans = sorted((r.start_time, r.end_time) for r in records if r.start_time and r.end_time)
        assert len(spans) == 3
        overlapped = [later[0] < earlier[1] for earlier, later in pairwise(spans)]
        assert any(overlapped), "no two runs overlapped"
        materialized = instance.get_materialized_partitions(dg.AssetKey(["warehouse", "conversation_tables"]))
        assert len(materialized) == 4

    # Two runs side by side, in two processes, held to one budget through PostgreSQL.
    times = fetch_times(work / "lake")
    assert len(times) >= 40
    # Any 20 consecutive responses span at least 19 intervals (6.3 s), less the difference in how
    # long the first and the last took to arrive: 0.3 s on a loaded machine, 0.7 s once while the
    # whole suite ran beside it, so 1 s is allowed. Two budgets, one a process, would let them
    # span 3.2 s.
    window = 20
    spans = [times[i + window - 1] - times[i] for i in range(len(times) - window + 1)]
    assert min(spans) >= (window - 1) / MAX_RPS - 1.0, min(spans)


def test_evaluate_queues_the_start_of_an_evaluation_for_the_daemon(
    queued_home: tuple[Path, dict[str, str]],
) -> None:
    """`evaluate` starts the evaluation with a run of `start_evaluation_job` that the daemon
    launches from the queue, then loads the run it names, as without a daemon."""
    work, env = queued_home
    app = env["CES_APPS"].split(",")[0]
    done = cli("evaluate", "--app", app, "--evaluations", "refund-happy-path", env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    run_name = done.stdout.split("evaluation run ", 1)[1].split()[0]
    assert run_name.startswith(f"{app}/evaluationRuns/")
    with Warehouse(env["CES_WAREHOUSE"]).connect(read_only=True) as conn:
        assert conn.execute(
            "SELECT count(*) FROM evaluation_runs WHERE evaluation_run_name = ?", [run_name]
        ).fetchone() == (1,)
    with dagster_instance_at(env) as instance:
        coordinator = run_coordinator(instance)
        assert isinstance(coordinator, dg.QueuedRunCoordinator)
        assert coordinator.dequeue_interval_seconds == 1  # a queued run starts within a second, not 5
        (started,) = instance.get_run_records(dg.RunsFilter(job_name="start_evaluation_job"))
        assert started.dagster_run.status == dg.DagsterRunStatus.SUCCESS
        kinds = [
            entry.dagster_event.event_type
            for entry in instance.all_logs(started.dagster_run.run_id)
            if entry.dagster_event is not None
        ]
        assert kinds.index(dg.DagsterEventType.RUN_ENQUEUED) < kinds.index(dg.DagsterEventType.RUN_STARTING)
