"""One benchmark approach per process: `python -m bench.approaches NAME --lake … --work …`.

Each approach turns the raw lake's conversations into the warehouse's conversation tables and
prints one JSON line: what it did, its wall time, and its row counts per table. The runner
(`bench.run`) measures CPU time and peak memory from outside.

- `rebuild`: `ces-pipeline rebuild --since … --until …`, the default command, over the
  corpus's days: Dagster runs, each over a range of one app's partitions (flatten, load).
- `ingest`: `ces-pipeline ingest` over the same days against a running simulator.
- `duckdb`: DuckDB's own `read_json` flattening the same files into the same tables
  (`bench/sql/duckdb_flatten.sql`).
- `dlt`: a dlt pipeline loading the same rows into DuckDB with its Parquet loader.
- `ratelimited`: `ces-pipeline ingest` of one partition with the request rate capped (the
  documented 10/s by default), recording when each request was granted and the process's CPU
  then, to show whether requests go out back to back at the allowed rate, and at what CPU.
- `backfill`: the rebuild job's assets over every partition of the corpus, as a backfill
  launched from the Dagster UI: submitted to an instance whose `dagster-daemon` runs it.

`--profile PATH` (rebuild, ingest, ratelimited) samples the command's CPU by phase into PATH
(`bench.profiling`).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.profiling import sampled

TABLES = (
    "conversations",
    "turns",
    "messages",
    "chunks",
    "tool_calls",
    "tool_responses",
    "agent_transfers",
    "spans",
)
SQL_DIR = Path(__file__).resolve().parent / "sql"


def _link_raw(lake_root: str, work: Path, apps: Iterable[str] | None = None) -> str:
    """A fresh lake under `work` whose raw records are the corpus's (links, nothing copied): its
    whole raw folder as a symlink, or only the conversation files of `apps`, each hard-linked
    (the lake's listing does not descend into symlinked folders below its root), so that one
    lake can gather apps from several roots (bench.scale's replicas beside the corpus)."""
    lake = work / "lake"
    lake.mkdir(parents=True, exist_ok=True)
    raw = lake / "raw"
    if apps is None:
        if not raw.exists():
            raw.symlink_to(Path(lake_root).resolve() / "raw", target_is_directory=True)
        return str(lake)
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.paths import app_segment
    from pipelines.lake.store import RAW_FILE

    for app in apps:
        folder = Path("raw", CONVERSATIONS_DATASET, f"app={app_segment(app)}")
        for source in (Path(lake_root) / folder).glob(f"date=*/{RAW_FILE}"):
            link = lake / folder / source.parent.name / RAW_FILE
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                try:
                    os.link(source, link)
                except OSError:  # another filesystem
                    shutil.copyfile(source, link)
    return str(lake)


def _warehouse_counts(path: str) -> dict[str, int]:
    from pipelines.warehouse.duck import Warehouse

    counts = Warehouse(path).row_counts()
    return {table: counts[table] for table in TABLES}


# -- the project's paths: the default commands, as a user runs them ---------------------------


def _partitions(lake_root: str, limit: int | None = None) -> list[tuple[str, str]]:
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    found = [(app, day.isoformat()) for app, day in Lake(lake_root).raw_partitions(CONVERSATIONS_DATASET)]
    # Interleave apps, so that a prefix of the list spreads over apps like the whole does.
    found.sort(key=lambda item: (item[1], item[0]))
    return found[:limit] if limit else found


def _instance_env(
    work: Path, lake_root: str, partitions: list[tuple[str, str]], **env: str
) -> dict[str, str]:
    """The environment of a `ces-pipeline` command or a Dagster daemon over these partitions:
    an instance of its own under `work` with the project's instance settings (dagster.yaml),
    the lake, a warehouse under `work`, and the partitions' apps."""
    (work / "dagster_home").mkdir(parents=True, exist_ok=True)
    shutil.copy(
        Path(__file__).resolve().parent.parent / "dagster_home" / "dagster.yaml", work / "dagster_home"
    )
    return {
        "DAGSTER_HOME": str(work / "dagster_home"),
        "CES_LAKE": lake_root,
        "CES_WAREHOUSE": str(work / "warehouse.duckdb"),
        "CES_APPS": ",".join(sorted({app for app, _ in partitions})),
        **env,
    }


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    return usage.ru_utime + usage.ru_stime


def _command(
    name: str,
    partitions: list[tuple[str, str]],
    work: Path,
    lake_root: str,
    *,
    profile: str | None = None,
    extra: tuple[str, ...] = (),
    **env: str,
) -> dict[str, float]:
    """`ces-pipeline NAME --since … --until … EXTRA…` over the partitions' days and apps, in this process
    (its Dagster runs in an instance of its own under `work`): its wall time and CPU time, under
    the phase sampler into `profile` when given (`bench.profiling`)."""
    from pipelines.cli import main as cli_main

    os.environ.update(_instance_env(work, lake_root, partitions, **env))
    args = _command_args(name, partitions, extra)
    cpu, started = _cpu_seconds(), time.perf_counter()
    with sampled(profile) if profile else contextlib.nullcontext():
        code = cli_main(args)
    elapsed, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
    if code != 0:
        raise SystemExit(f"ces-pipeline {' '.join(args)} exited {code}")
    return {"seconds": elapsed, "command_cpu_seconds": cpu}


def _command_args(name: str, partitions: list[tuple[str, str]], extra: tuple[str, ...] = ()) -> list[str]:
    """`NAME --since … --until … --skip-evaluations EXTRA…`: the arguments the bench gives a
    load command over the partitions' days, in this process or as a command (bench.scale)."""
    days = sorted({date.fromisoformat(day) for _, day in partitions})
    since, until = str(days[0]), str(days[-1] + timedelta(days=1))
    return [name, "--since", since, "--until", until, "--skip-evaluations", *extra]


def _partition_rows(warehouse_path: str) -> dict[str, dict[str, int]]:
    """Rows per table of each (app, day) the warehouse holds."""
    from pipelines.warehouse.duck import Warehouse

    found: dict[str, dict[str, int]] = {}
    with Warehouse(warehouse_path).connect(read_only=True) as conn:
        for table in TABLES:
            rows = conn.execute(
                f"SELECT c.app, t.partition_date, count(*) FROM {table} AS t "
                "JOIN conversations AS c USING (conversation_name) GROUP BY ALL"
            ).fetchall()
            for app, day, count in rows:
                found.setdefault(f"{app}|{day}", dict.fromkeys(TABLES, 0))[table] = count
    return found


def rebuild(args: argparse.Namespace) -> dict[str, Any]:
    """`ces-pipeline rebuild` over the corpus's days: Dagster runs over ranges of partitions."""
    work = Path(args.work)
    lake_root = _link_raw(args.lake, work)
    partitions = _partitions(lake_root, args.partitions)
    timing = _command("rebuild", partitions, work, lake_root, profile=args.profile)
    return {**timing, "partitions": len(partitions), **_warehouse_rows(work)}


def ingest(args: argparse.Namespace) -> dict[str, Any]:
    """`ces-pipeline ingest` against the simulator serving the corpus."""
    work = Path(args.work)
    partitions = _partitions(args.lake, args.partitions)
    timing = _command(
        "ingest",
        partitions,
        work,
        str(work / "lake"),
        profile=args.profile,
        CES_MCP_URL=args.url,
        CES_MAX_RPS=str(args.max_rps),
    )
    return {**timing, "partitions": len(partitions), **_warehouse_rows(work)}


def _warehouse_rows(work: Path) -> dict[str, Any]:
    warehouse = str(work / "warehouse.duckdb")
    return {"rows": _warehouse_counts(warehouse), "partition_rows": _partition_rows(warehouse)}


# -- DuckDB's own JSON reader -------------------------------------------------------------------


def duckdb_read_json(args: argparse.Namespace) -> dict[str, Any]:
    import duckdb

    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake
    from pipelines.warehouse.duck import Warehouse

    lake = Lake(args.lake)
    files = [
        lake.raw_path(CONVERSATIONS_DATASET, app, day) for app, day in lake.raw_partitions("conversations")
    ]
    listing = "[" + ", ".join("'" + path.replace("'", "''") + "'" for path in files) + "]"
    sql = (SQL_DIR / "duckdb_flatten.sql").read_text().format(files=listing)
    # DuckDB as it comes: its own memory limit (80% of RAM) and threads (one per core), not the
    # ones the pipeline's loads get.
    with duckdb.connect() as defaults:
        memory_limit, threads = defaults.execute(
            "SELECT current_setting('memory_limit'), current_setting('threads')"
        ).fetchone()
    warehouse = Warehouse(
        str(Path(args.work) / "warehouse.duckdb"), write_memory_limit=memory_limit, write_threads=threads
    )
    started = time.perf_counter()
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        conn.execute(sql)
    elapsed = time.perf_counter() - started
    return {"seconds": elapsed, "files": len(files), "rows": _warehouse_counts(warehouse.path)}


# -- dlt ----------------------------------------------------------------------------------------


def dlt_pipeline(args: argparse.Namespace) -> dict[str, Any]:
    from bench.dlt_pipeline import run_dlt

    return run_dlt(args.lake, Path(args.work), limit=args.limit)


# -- the request rate with the limit on ---------------------------------------------------------


def _record_grants() -> list[tuple[float, float]]:
    """From now on, every permit the client's rate limiter grants in this process, as (the time
    it was granted for, this process's CPU seconds then)."""
    from pipelines.ces import ratelimit

    granted: list[tuple[float, float]] = []
    # Each class that defines its own `acquire`, so that an inherited one is counted once.
    for limiter in (c for c in (ratelimit.RateLimiter, ratelimit.FileRateLimiter) if "acquire" in vars(c)):

        def acquire(self: Any, _acquire: Any = limiter.acquire) -> float:
            at = _acquire(self)
            granted.append((at, _cpu_seconds()))
            return at

        limiter.acquire = acquire  # type: ignore[method-assign]
    return granted


def rate_limited(args: argparse.Namespace) -> dict[str, Any]:
    """`ces-pipeline ingest` of one (app, day) with `CES_MAX_RPS` set: when each request was
    granted, and the CPU the process spent meanwhile."""
    work = Path(args.work)
    granted = _record_grants()
    timing = _command(
        "ingest",
        [(args.app, args.day)],
        work,
        str(work / "lake"),
        profile=args.profile,
        CES_MCP_URL=args.url,
        CES_MAX_RPS=f"{args.max_rps:g}",
    )
    interval = 1.0 / args.max_rps
    times = [at for at, _ in granted]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    # The session's set-up and the first page come one after another (nothing can be asked
    # before the first page says what to hydrate and where the next page is): the steady rate
    # is measured from the first page's answer, the wait before it reported apart.
    first = _first_page_grant(args, len(times))
    steady = gaps[first + 1 :]
    window = granted[first + 1 :]
    span = window[-1][0] - window[0][0] if len(window) > 1 else 0.0
    return {
        **timing,
        "max_rps": args.max_rps,
        "requests": len(times),
        "rows": _warehouse_counts(str(work / "warehouse.duckdb")),
        "first_page_wait_ms": 1000 * gaps[first] if len(gaps) > first else 0.0,
        "setup_requests": first,
        "achieved_rps": (len(window) - 1) / span if span else 0.0,
        "requests_seconds": span,
        "requests_cpu_seconds": window[-1][1] - window[0][1] if len(window) > 1 else 0.0,
        "interval_ms": 1000 * interval,
        "max_gap_ms": 1000 * max(steady, default=0.0),
        "gaps_over_1_5_intervals": sum(gap > 1.5 * interval for gap in steady),
        "idle_seconds": sum(max(0.0, gap - interval) for gap in steady),
    }


def _first_page_grant(args: argparse.Namespace, requests: int) -> int:
    """The index of the first list_conversations request: those before it open the session."""
    from pipelines.ces.tools import LIST_CONVERSATIONS
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    lake = Lake(str(Path(args.work) / "lake"))
    records = list(lake.read_raw(CONVERSATIONS_DATASET, args.app, date.fromisoformat(args.day)))
    assert records and records[0]["tool"] == LIST_CONVERSATIONS
    return max(0, requests - len(records))


# -- a backfill from the Dagster UI -------------------------------------------------------------

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
    lake_root = _link_raw(args.lake, work)
    partitions = _partitions(lake_root, args.partitions)
    os.environ.update(_instance_env(work, lake_root, partitions))
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
        **_warehouse_rows(work),
    }


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                children = {int(child) for child in handle.read().split()}
            for child in children:
                found |= {child, *_descendants(child)}
    except (FileNotFoundError, ProcessLookupError):
        pass  # it has just ended
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def _stop(daemon: subprocess.Popen, timeout: float = 60.0) -> None:
    """Stop the daemon, then wait for its code server, which outlives it until its heartbeat
    times out (20 s), so that the measured process tree ends with it; the runs have ended."""
    left = _descendants(daemon.pid)
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


APPROACHES = {
    "rebuild": rebuild,
    "ingest": ingest,
    "duckdb": duckdb_read_json,
    "dlt": dlt_pipeline,
    "ratelimited": rate_limited,
    "backfill": backfill,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="run one benchmark approach")
    parser.add_argument("approach", choices=sorted(APPROACHES))
    parser.add_argument("--lake", required=True, help="the corpus lake root (raw records)")
    parser.add_argument("--work", required=True, help="an empty folder for this approach's output")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--url", help="simulator MCP endpoint (ingest, ratelimited)")
    parser.add_argument("--max-rps", type=float, default=1e6)
    parser.add_argument("--partitions", type=int, help="ingest or rebuild only the first N partitions")
    parser.add_argument("--limit", type=int, help="dlt: only the first N conversations")
    parser.add_argument("--app")
    parser.add_argument("--day")
    parser.add_argument(
        "--profile", help="rebuild, ingest, ratelimited: sample the CPU by phase into this JSON file"
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="backfill: give up after this long")
    args = parser.parse_args(argv)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    result = APPROACHES[args.approach](args)
    result["finished_at"] = datetime.now(UTC).isoformat()
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
