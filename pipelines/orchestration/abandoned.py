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


def fail_abandoned_runs(instance: dg.DagsterInstance, *, this_process: bool = False) -> list[str]:
    """Record as failed, and free the pool slots of, every unfinished run of this host whose
    process is gone; the ids of those runs. A process id reused since can only keep a run as it is.

    With `this_process`, the runs this process created and left unfinished instead: Ctrl-C between
    Dagster creating a run and starting it leaves it NOT_STARTED, which no run monitor ever ends."""
    host, me = socket.gethostname(), os.getpid()
    failed = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=_UNFINISHED, tags={HOST_TAG: host})):
        run = record.dagster_run
        pid = int(run.tags.get(PID_TAG) or 0)
        if this_process and pid == me:
            reason = "interrupted before it started"
        elif not this_process and pid > 0 and pid != me and not _alive(pid):
            reason = f"the ces-pipeline process that ran it ({host}, pid {pid}) ended before the run"
        else:
            continue
        record_run_failed(instance, run, reason)
        free_pool_slots(instance, run.run_id)
        failed.append(run.run_id)
    return failed
