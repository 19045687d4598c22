"""How the CLI runs its runs when a daemon's heartbeat is in the instance: executed here unless
`CES_QUEUE_RUNS` asks for the queue, never queued for a daemon that stopped, never waited on
silently, and no queued run left behind by an interrupted command.

The instances here are the project's own `dagster_home/dagster.yaml` (SQLite, Dagster's default
QueuedRunCoordinator); the daemon is a heartbeat written into them, as a `dagster dev` that was
stopped leaves it, or written on, as a live daemon does, with nothing taking runs off the queue."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster._daemon.types import DaemonHeartbeat
from dagster_runs import instance_at
from test_cli import SCALE, base_env, cli

from pipelines.ces.simulator import SimulatorConfig, running_simulator
from pipelines.orchestration import run_queue
from pipelines.orchestration.dagster_private import QUEUE_DAEMON, run_log
from pipelines.warehouse.duck import Warehouse

WINDOW = ("--since", "2026-11-01", "--until", "2026-11-03", "--skip-evaluations")


def beat(home: Path, age_seconds: float) -> None:
    """Write the queue daemon's heartbeat into the instance at `home`, `age_seconds` old."""
    with instance_at(home) as instance:
        instance.add_daemon_heartbeat(
            DaemonHeartbeat(time.time() - age_seconds, QUEUE_DAEMON, "test-daemon", errors=[])
        )


@pytest.fixture
def env(workdir: Path) -> Iterator[dict[str, str]]:
    """The environment of a user whose CES is the simulator: one app, two days, a run per day."""
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        yield base_env(workdir) | {
            "CES_MCP_URL": sim.url,
            "CES_APPS": ",".join(sim.apps),
            "CES_DAYS_PER_RUN": "1",
        }


def runs_by_status(home: Path) -> dict[str, int]:
    with instance_at(home) as instance:
        records = instance.get_run_records(dg.RunsFilter(job_name="ingest_conversations"))
    counts: dict[str, int] = {}
    for record in records:
        counts[record.dagster_run.status.value] = counts.get(record.dagster_run.status.value, 0) + 1
    return counts


@pytest.mark.timeout(120)
def test_a_stopped_daemons_heartbeat_does_not_make_ingest_wait(workdir: Path, env: dict[str, str]) -> None:
    """`make dev`, Ctrl-C, then `ces-pipeline ingest`: Dagster still calls the daemon healthy
    (it tolerates 30 minutes of silence), and the runs execute here, at once."""
    home = workdir / "dagster_home"
    beat(home, age_seconds=120)
    with instance_at(home) as instance:
        assert instance.get_daemon_statuses([QUEUE_DAEMON])[QUEUE_DAEMON].healthy  # what fooled the CLI

    done = cli("ingest", *WINDOW, env=env, cwd=workdir)

    assert done.returncode == 0, done.stderr
    assert "ingested 2 partitions in 2 runs: 12 conversations loaded" in " ".join(done.stderr.split())
    assert Warehouse(env["CES_WAREHOUSE"]).row_counts()["conversations"] == 12
    assert runs_by_status(home) == {"SUCCESS": 2}
    with instance_at(home) as instance:
        for record in instance.get_run_records(dg.RunsFilter(job_name="ingest_conversations")):
            kinds = {entry.dagster_event_type for entry in run_log(instance, record.dagster_run.run_id)}
            assert dg.DagsterEventType.RUN_ENQUEUED not in kinds


@pytest.mark.parametrize(
    ("age", "says"), [(300.0, r"the last is 30\d s old"), (None, "it never wrote one")]
)  # (the age as the CLI reads it, a second or more after it was written on a busy machine)
def test_queueing_without_a_live_daemon_queues_nothing_and_says_what_to_do(
    workdir: Path, env: dict[str, str], age: float | None, says: str
) -> None:
    if age is not None:
        beat(workdir / "dagster_home", age)
    started = time.monotonic()

    done = cli("ingest", *WINDOW, env=env | {"CES_QUEUE_RUNS": "true"}, cwd=workdir)

    said = " ".join(done.stderr.split())
    assert done.returncode == 1, said
    assert time.monotonic() - started < 30
    assert "CES_QUEUE_RUNS is set, but no dagster-daemon serves the instance" in said
    assert re.search(says, said) and "nothing was queued" in said
    # a command that starts one for this instance and its code (a home without a workspace.yaml)
    home = workdir / "dagster_home"
    assert f"(`DAGSTER_HOME={home} dagster-daemon run -m pipelines.definitions`, or `make dev`)" in said
    assert "unset CES_QUEUE_RUNS" in said
    assert "Traceback" not in said
    assert runs_by_status(workdir / "dagster_home") == {}


@pytest.mark.timeout(180)
def test_runs_left_in_the_queue_by_a_daemon_that_stops_are_canceled_and_reported(
    workdir: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heartbeat is fresh when the runs are queued, then goes stale: the CLI cancels the
    runs nobody started and fails the command, saying why once for both."""
    monkeypatch.setattr(run_queue, "HEARTBEAT_FRESH_SECONDS", 30.0)  # stale 8 s after the beat
    beat(workdir / "dagster_home", age_seconds=run_queue.HEARTBEAT_FRESH_SECONDS - 8)

    done = cli("ingest", *WINDOW, env=env | {"CES_QUEUE_RUNS": "1"}, cwd=workdir)

    said = " ".join(done.stderr.split())
    assert done.returncode == 1, said
    assert "the dagster-daemon stopped serving the queue" in said
    # One reason for both runs: said whole for the first, named for the second.
    assert said.count("canceled before it started: no dagster-daemon takes runs off the queue") == 1
    assert said.count(": the same error as projects/") == 1
    assert "all 2 runs failed with the error above: mend it, then run again." in said
    assert runs_by_status(workdir / "dagster_home") == {"CANCELED": 2}


@pytest.mark.timeout(180)
def test_runs_a_live_daemon_does_not_start_are_reported_and_canceled_on_ctrl_c(
    workdir: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon that keeps its heartbeat but starts nothing (its slots taken): the CLI says, once
    the runs have waited a while, what holds them; Ctrl-C cancels them and says so."""
    home = workdir / "dagster_home"
    monkeypatch.setattr(run_queue, "START_PATIENCE_SECONDS", 2.0)
    noticed = threading.Event()
    follow = run_queue._follow

    def follow_noting(*args: Any) -> None:  # `_follow`, its notice (the last argument) seen
        def told(message: str) -> None:
            args[-1](message)
            noticed.set()

        follow(*args[:-1], told)

    monkeypatch.setattr(run_queue, "_follow", follow_noting)
    alive = threading.Event()
    stop = threading.Event()

    def daemon() -> None:  # heartbeats, and once the CLI has said what holds the runs, Ctrl-C
        deadline = time.monotonic() + 90
        with instance_at(home) as instance:
            while not stop.is_set():
                instance.add_daemon_heartbeat(DaemonHeartbeat(time.time(), QUEUE_DAEMON, "busy", errors=[]))
                alive.set()
                if noticed.is_set() or time.monotonic() > deadline:
                    os.kill(os.getpid(), signal.SIGINT)
                    return
                time.sleep(0.5)

    heart = threading.Thread(target=daemon, daemon=True)
    heart.start()
    assert alive.wait(30)
    try:
        done = cli("ingest", *WINDOW, env=env | {"CES_QUEUE_RUNS": "yes"}, cwd=workdir)
    finally:
        stop.set()
        heart.join(30)

    said = " ".join(done.stderr.split())
    assert done.returncode == 130, said
    assert (
        "2 runs have waited in the queue for 2 s: the daemon is alive and 0 runs of the instance are "
        "in progress" in said
    )
    assert "interrupted: 2 queued runs that had not started were canceled" in said
    assert "started runs go on" not in said
    assert runs_by_status(home) == {"CANCELED": 2}


def test_a_launch_the_queue_refuses_is_a_failed_run_saying_why_and_the_others_are_queued() -> None:
    """Each run is queued by its own `dagster job launch`: one that fails is reported with the last
    line it wrote (Dagster's error comes after its stack trace), the runs of the others are kept
    to be followed."""
    days = ("2026-11-01", "2026-11-02", "2026-11-03")
    planned = {f"run-{day}": run_queue.PlannedRun.for_partition(day) for day in days}
    refuses_the_second = [
        "/bin/sh",
        "-c",
        'case "$*" in *2026-11-02*) printf "Traceback\\n  no such job\\n\\n" >&2; exit 1;; esac',
        "launch",
    ]
    reported: dict[str, run_queue.RunOutcome] = {}

    queued = run_queue._submit(refuses_the_second, planned, reported.__setitem__)

    assert sorted(queued) == ["run-2026-11-01", "run-2026-11-03"]
    assert list(reported) == ["run-2026-11-02"]
    refused = reported["run-2026-11-02"]
    assert not refused.success and refused.label == "2026-11-02"
    assert refused.error == "dagster job launch refused 2026-11-02: no such job"
