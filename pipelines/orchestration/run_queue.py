"""Runs queued for a `dagster-daemon`, when `CES_QUEUE_RUNS` asks for it: each put on the
instance's queue with `dagster job launch`, then followed from the instance to its end.

Queueing is asked for, never guessed. Dagster calls a daemon healthy for 30 minutes after its
last heartbeat, so a `dagster dev` stopped a minute ago looks alive; and a queued run executes
with the daemon's configuration, not with that of the shell that queued it. Whoever queues is
never left waiting on nothing:
- nothing is queued unless the daemon's heartbeat is fresh (`HEARTBEAT_FRESH_SECONDS`);
- while runs are followed, a daemon whose heartbeat goes stale has the runs it did not start
  canceled, and those it started reported as no longer followed;
- runs still queued after `START_PATIENCE_SECONDS` without a change are said to be, with what
  holds them and what to do;
- Ctrl-C cancels the runs not started yet and names those that go on."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import dagster as dg

from pipelines import stop
from pipelines.errors import ActionableError
from pipelines.orchestration.dagster_private import cancel_queued_run, queue_daemon_heartbeat, run_coordinator
from pipelines.orchestration.runs import Notice, PlannedRun, RunOutcome, run_outcome

HEARTBEAT_FRESH_SECONDS = 90.0
"""A daemon serves the queue while its last heartbeat is younger: three of its 30 s intervals."""
START_PATIENCE_SECONDS = 120.0
"""Runs queued this long with none started or ended are reported, once, with what holds them."""
FOLLOW_SECONDS = 1.0
"""How often the followed runs' states (and the daemon's heartbeat) are read back."""
SUBMITTERS = 4
"""Runs put on the queue at once (each `dagster job launch` loads the code location: ~5 s)."""


class QueueNotServedError(ActionableError, RuntimeError):
    """`CES_QUEUE_RUNS` is set, but no daemon takes runs off the instance's queue: nothing queued."""


class StoppedFollowing(KeyboardInterrupt):
    """Ctrl-C while queued runs were followed: those not started are canceled, the others go on."""

    def __init__(self, canceled: Sequence[str], going_on: Sequence[str]):
        said = f"interrupted: {len(canceled)} queued runs that had not started were canceled"
        if going_on:
            said += (
                f"; {len(going_on)} started runs go on in the instance (the Dagster UI shows them and "
                f"can terminate them): {', '.join(going_on)}"
            )
        super().__init__(said)


def daemon_silence(instance: dg.DagsterInstance) -> float | None:
    """Seconds since the queue's daemon last wrote its heartbeat; None if it never did."""
    beat = queue_daemon_heartbeat(instance)
    return None if beat is None else max(time.time() - beat, 0.0)


def _silent(silence: float | None) -> bool:
    return silence is None or silence > HEARTBEAT_FRESH_SECONDS


def require_served(instance: dg.DagsterInstance, home: Path) -> None:
    """Raise `QueueNotServedError` unless the instance queues runs and a daemon serves it now."""
    coordinator = run_coordinator(instance)
    if not isinstance(coordinator, dg.QueuedRunCoordinator):
        raise QueueNotServedError(
            f"CES_QUEUE_RUNS is set, but the instance in {home} does not queue runs (its run coordinator "
            f"is {type(coordinator).__name__}): configure the QueuedRunCoordinator, as "
            "scale/dagster.yaml does, or unset CES_QUEUE_RUNS to execute the runs here"
        )
    silence = daemon_silence(instance)
    if _silent(silence):
        last = "it never wrote one" if silence is None else f"the last is {silence:.0f} s old"
        raise QueueNotServedError(
            f"CES_QUEUE_RUNS is set, but no dagster-daemon serves the instance in {home} (no heartbeat "
            f"in {HEARTBEAT_FRESH_SECONDS:.0f} s: {last}), so nothing was queued. Start one "
            f"(`DAGSTER_HOME={home} dagster-daemon run {' '.join(_code_location(home))}`, or `make dev`), "
            "or unset CES_QUEUE_RUNS to execute the runs here"
        )


def cancel_queued(instance: dg.DagsterInstance, run_ids: Sequence[str]) -> list[str]:
    """Cancel those of the runs still waiting in the queue; the ids of the runs canceled."""
    queued = dg.RunsFilter(run_ids=list(run_ids), statuses=[dg.DagsterRunStatus.QUEUED])
    return [
        record.dagster_run.run_id
        for record in instance.get_run_records(queued)
        if cancel_queued_run(instance, record.dagster_run.run_id)
    ]


def submit_and_follow(
    job_name: str,
    runs: Sequence[PlannedRun],
    instance: dg.DagsterInstance,
    home: Path,
    run_config: Mapping[str, Any],
    report: Callable[[RunOutcome], None],
    notice: Notice,
) -> None:
    """Queue every run on the instance in `home`, then `report` each outcome as its run ends, in
    any order. A run the queue refused, or one given up with its daemon, is a failed outcome
    saying why."""
    require_served(instance, home)
    planned = {str(uuid.uuid4()): run for run in runs}
    ended: set[str] = set()

    def reported(run_id: str, outcome: RunOutcome) -> None:
        ended.add(run_id)
        report(outcome)

    try:
        queued = _submit(_launch_command(job_name, home, run_config), planned, reported)
        _follow(queued, instance, reported, notice)
    except KeyboardInterrupt:
        unfinished = [run_id for run_id in planned if run_id not in ended]
        canceled = cancel_queued(instance, unfinished)
        going_on = [
            record.dagster_run.run_id
            for record in instance.get_run_records(dg.RunsFilter(run_ids=unfinished))
            if not record.dagster_run.is_finished
        ]
        raise StoppedFollowing(canceled, going_on) from None


def _code_location(home: Path) -> list[str]:
    """The options naming the code location of the instance in `home`: its `workspace.yaml` (the
    daemon's) when there is one, else this package's definitions."""
    workspace = home / "workspace.yaml"
    return ["-w", str(workspace)] if workspace.exists() else ["-m", "pipelines.definitions"]


def _launch_command(job_name: str, home: Path, run_config: Mapping[str, Any]) -> list[str]:
    """`dagster job launch` on the instance in `home`, with its code location. The command opens
    the instance of `$DAGSTER_HOME` and has no option for another: `env` gives it `home` on top of
    the environment it inherits (which its code location's settings read)."""
    command = ["/usr/bin/env", f"DAGSTER_HOME={home}", sys.executable, "-m", "dagster", "job", "launch"]
    return [*command, "-j", job_name, *_code_location(home), "--config-json", json.dumps(run_config)]


def _submit(
    command: Sequence[str],
    planned: Mapping[str, PlannedRun],
    reported: Callable[[str, RunOutcome], None],
) -> dict[str, PlannedRun]:
    """Put the runs on the queue with `command`, `SUBMITTERS` launches at a time; the runs queued.
    A launch that fails is reported with the last line it wrote to stderr. A launch still going
    when this is interrupted is killed (the caller cancels what it managed to queue)."""
    waiting = list(planned.items())
    launching: dict[str, tuple[subprocess.Popen[bytes], IO[bytes]]] = {}
    queued: dict[str, PlannedRun] = {}
    try:
        while waiting or launching:
            while waiting and len(launching) < SUBMITTERS:
                run_id, run = waiting.pop(0)
                stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed when the launch ends)
                arguments = ["--tags", json.dumps(dict(run.tags)), "--run-id", run_id]
                process = subprocess.Popen([*command, *arguments], stdout=subprocess.DEVNULL, stderr=stderr)
                launching[run_id] = (process, stderr)
            stop.pause(0.1)
            for run_id, (process, stderr) in list(launching.items()):
                if process.poll() is None:
                    continue
                del launching[run_id]
                with stderr:
                    stderr.seek(0)
                    last_line = stderr.read().decode(errors="replace").strip().rpartition("\n")[2]
                if process.returncode == 0:
                    queued[run_id] = planned[run_id]
                else:
                    why = f"dagster job launch refused {planned[run_id].label}: {last_line.strip() or '?'}"
                    reported(run_id, RunOutcome.not_run(planned[run_id], why))
    finally:
        for process, stderr in launching.values():
            process.kill()
            process.wait()
            stderr.close()
    return queued


def _follow(
    queued: dict[str, PlannedRun],
    instance: dg.DagsterInstance,
    reported: Callable[[str, RunOutcome], None],
    notice: Notice,
) -> None:
    """Wait for every queued run to end, reporting each; give the rest up if the daemon stops."""
    changed, warned, seen = time.monotonic(), False, None
    while queued:
        stop.pause(FOLLOW_SECONDS)
        records = instance.get_run_records(dg.RunsFilter(run_ids=list(queued)))
        for record in records:
            if record.dagster_run.is_finished:
                run_id = record.dagster_run.run_id
                reported(run_id, run_outcome(queued.pop(run_id), run_id, instance))
        states = sorted((r.dagster_run.run_id, r.dagster_run.status.value) for r in records)
        if states != seen:
            changed, warned, seen = time.monotonic(), False, states
        silence = daemon_silence(instance)
        if _silent(silence):
            _give_up(queued, instance, silence, reported, notice)
            return
        waiting = sum(1 for record in records if record.dagster_run.status == dg.DagsterRunStatus.QUEUED)
        if waiting and not warned and time.monotonic() - changed > START_PATIENCE_SECONDS:
            warned = True
            in_progress = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]
            ahead = len(instance.get_run_records(dg.RunsFilter(statuses=in_progress)))
            notice(
                f"{waiting} runs have waited in the queue for {START_PATIENCE_SECONDS:.0f} s: the daemon "
                f"is alive and {ahead} runs of the instance are in progress; each starts when one of the "
                "max_concurrent_runs slots of dagster.yaml is free (the Dagster UI's queue shows what "
                "holds it). Ctrl-C cancels the runs not started."
            )


def _give_up(
    queued: dict[str, PlannedRun],
    instance: dg.DagsterInstance,
    silence: float | None,
    reported: Callable[[str, RunOutcome], None],
    notice: Notice,
) -> None:
    """The daemon stopped: cancel the runs it did not start, stop following the ones it did."""
    since = "it never wrote one" if silence is None else f"none for {silence:.0f} s"
    notice(f"the dagster-daemon stopped serving the queue (heartbeat: {since}): not waiting for it")
    canceled = set(cancel_queued(instance, list(queued)))
    for run_id, run in queued.items():
        if run_id in canceled:
            why = "canceled before it started: no dagster-daemon takes runs off the queue"
        else:
            why = (
                f"not followed to its end (run {run_id}): the dagster-daemon that launched it stopped; "
                "the Dagster UI shows how it ends"
            )
        reported(run_id, RunOutcome.not_run(run, why))
    queued.clear()
