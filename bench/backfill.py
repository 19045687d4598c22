"""The `backfill` approach: the rebuild job's assets over every partition of the corpus, as a
backfill launched from the Dagster UI, submitted to an instance whose `dagster-daemon` runs it."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from bench.measure import process_tree
from bench.workspace import instance_env, link_raw, partitions_of, warehouse_rows

_DONE = {"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"}
_RUN_DONE = {"SUCCESS", "FAILURE", "CANCELED"}


def backfill(args: argparse.Namespace) -> dict[str, Any]:
    """The rebuild job's assets over every partition of the corpus, backfilled as the UI does it:
    the instance gets the backfill (`PartitionBackfill.from_asset_partitions`, which the UI's
    `launchPartitionBackfill` mutation calls for an asset selection) and a `dagster-daemon`
    serving the project's code location (`-m pipelines.definitions`) plans and launches the runs;
    waits until the backfill and its runs are done."""
    from dagster._core.execution.backfill import PartitionBackfill
    from dagster._core.utils import make_new_backfill_id

    work = Path(args.work)
    lake_root = link_raw(args.lake, work)
    partitions = partitions_of(lake_root, args.partitions)
    os.environ.update(instance_env(work, lake_root, partitions))
    from pipelines.config import Settings
    from pipelines.definitions import build_definitions
    from pipelines.orchestration.keys import LAKE_CONVERSATIONS, WAREHOUSE_CONVERSATIONS
    from pipelines.orchestration.partitions import partition_key, register_apps
    from pipelines.orchestration.runs import dagster_instance

    settings = Settings.from_env()
    definitions = build_definitions(settings)
    instance = dagster_instance(settings)
    register_apps(instance, [app for app, _ in partitions])
    log = (work / "daemon.log").open("wb")
    daemon = subprocess.Popen(
        [str(Path(sys.executable).with_name("dagster-daemon")), "run", "-m", "pipelines.definitions"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_for_daemon(instance, daemon)  # a UI user's daemon is already running
        started, submitted = time.perf_counter(), time.time()
        request = PartitionBackfill.from_asset_partitions(
            backfill_id=make_new_backfill_id(),
            asset_graph=definitions.resolve_asset_graph(),
            partition_names=[str(partition_key(app, date.fromisoformat(day))) for app, day in partitions],
            asset_selection=[LAKE_CONVERSATIONS, WAREHOUSE_CONVERSATIONS],  # rebuild_conversations
            backfill_timestamp=submitted,
            tags={},
            dynamic_partitions_store=instance,
            all_partitions=False,
            title="bench",
            description=None,
            run_config=None,
        )
        instance.add_backfill(request)
        status, runs = _wait_for_backfill(instance, request.backfill_id, daemon, args.timeout)
        elapsed = time.perf_counter() - started
    finally:
        _stop(daemon)
        log.close()
    partitions_def = definitions.resolve_assets_def(WAREHOUSE_CONVERSATIONS).partitions_def
    sizes = [_run_partitions(record.dagster_run.tags, partitions_def, instance) for record in runs]
    return {
        "seconds": elapsed,
        "partitions": len(partitions),
        "status": status,
        "backfill_id": request.backfill_id,
        "runs": len(runs),
        "runs_by_status": dict(Counter(record.dagster_run.status.value for record in runs)),
        "partitions_per_run": dict(Counter(sizes)),
        "run_seconds": sum((record.end_time or 0) - (record.start_time or 0) for record in runs),
        "first_run_started_after": min((r.start_time for r in runs if r.start_time), default=submitted)
        - submitted,
        "last_run_ended_after": max((r.end_time for r in runs if r.end_time), default=submitted) - submitted,
        **warehouse_rows(work),
    }


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def _stop(daemon: subprocess.Popen, timeout: float = 60.0) -> None:
    """Stop the daemon, then wait for its code server, which outlives it until its heartbeat
    times out (20 s), so that the measured process tree ends with it; the runs have ended."""
    left = process_tree(daemon.pid) - {daemon.pid}
    daemon.terminate()
    daemon.wait(timeout=120)
    deadline = time.monotonic() + timeout
    while left and time.monotonic() < deadline:
        left = {pid for pid in left if _alive(pid)}
        time.sleep(0.2)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def _wait_for_daemon(instance: Any, daemon: subprocess.Popen, timeout: float = 300.0) -> None:
    """Until the daemon's backfill daemon has sent its first heartbeat."""
    deadline = time.monotonic() + timeout
    while "BACKFILL" not in instance.get_daemon_heartbeats():
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("dagster-daemon did not start (see its log in the work folder)")
        time.sleep(0.5)


def _wait_for_backfill(
    instance: Any, backfill_id: str, daemon: subprocess.Popen, timeout: float
) -> tuple[str, list[Any]]:
    """The backfill's final status and its runs' records, once it and they are done (or
    `timeout` passed)."""
    import dagster as dg

    deadline = time.monotonic() + timeout
    while True:
        status = instance.get_backfill(backfill_id).status.value
        runs = instance.get_run_records(dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
        if status in _DONE and all(record.dagster_run.status.value in _RUN_DONE for record in runs):
            return status, runs
        if daemon.poll() is not None:
            raise SystemExit(f"dagster-daemon exited {daemon.returncode} (see its log in the work folder)")
        if time.monotonic() > deadline:
            return f"TIMED OUT ({status})", runs
        time.sleep(1.0)


def _run_partitions(tags: dict[str, str], partitions_def: Any, instance: Any) -> int:
    """How many partitions a run covered: the keys of its range, or one."""
    import dagster as dg

    from pipelines.orchestration.partitions import RANGE_END_TAG, RANGE_START_TAG

    start, end = tags.get(RANGE_START_TAG), tags.get(RANGE_END_TAG)
    if not start or not end:
        return 1
    keys = partitions_def.get_partition_keys_in_range(
        dg.PartitionKeyRange(start, end), dynamic_partitions_store=instance
    )
    return len(keys)
