"""Runs a killed `ces-pipeline` left behind. A run executed in the CLI's own process (no daemon)
that is killed outright (SIGKILL, the OOM killer, a power cut) stays STARTED in the instance and
keeps its `ces_api` pool slot: enough of them and every later run waits for a slot forever.

Each such run carries its host and process id; the next command on that host records a run whose
process is gone as failed and frees its slots, as a daemon's run monitoring does for runs it
launched."""

from __future__ import annotations

import os
import socket

import dagster as dg

from pipelines.orchestration.dagster_private import free_pool_slots, record_run_failed

HOST_TAG = "ces/host"
PID_TAG = "ces/pid"
_UNFINISHED = [dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


def process_tags() -> dict[str, str]:
    """The tags that name the process executing a run here."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def fail_abandoned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Record every unfinished run of this host whose process is gone as failed, free its pool
    slots; the ids of those runs. A process id reused since can only keep a run as it is."""
    host = socket.gethostname()
    return [
        _record_failed(
            instance, run, f"the ces-pipeline process that ran it ({host}, pid {pid}) ended before the run"
        )
        for run, pid in _unfinished_runs_of_this_host(instance)
        if pid > 0 and pid != os.getpid() and not _alive(pid)
    ]


def fail_runs_interrupted_here(instance: dg.DagsterInstance) -> list[str]:
    """Record as failed the runs this process created and left unfinished: Ctrl-C between Dagster
    creating a run and starting it leaves it NOT_STARTED, which no run monitor ever ends."""
    return [
        _record_failed(instance, run, "interrupted before it started")
        for run, pid in _unfinished_runs_of_this_host(instance)
        if pid == os.getpid()
    ]


def _unfinished_runs_of_this_host(instance: dg.DagsterInstance) -> list[tuple[dg.DagsterRun, int]]:
    """The unfinished runs executed on this host by a `ces-pipeline` process, with its process id."""
    filters = dg.RunsFilter(statuses=_UNFINISHED, tags={HOST_TAG: socket.gethostname()})
    return [
        (record.dagster_run, int(record.dagster_run.tags.get(PID_TAG) or 0))
        for record in instance.get_run_records(filters)
    ]


def _record_failed(instance: dg.DagsterInstance, run: dg.DagsterRun, reason: str) -> str:
    record_run_failed(instance, run, reason)
    free_pool_slots(instance, run.run_id)
    return run.run_id
