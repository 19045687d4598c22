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
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from bench.backfill import backfill
from bench.profiling import sampled
from bench.workspace import (
    SQL_DIR,
    TABLES,
    command_args,
    instance_env,
    link_raw,
    partitions_of,
    warehouse_counts,
    warehouse_rows,
)


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

    os.environ.update(instance_env(work, lake_root, partitions, **env))
    args = command_args(name, partitions, extra)
    cpu, started = _cpu_seconds(), time.perf_counter()
    with sampled(profile) if profile else contextlib.nullcontext():
        code = cli_main(args)
    elapsed, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
    if code != 0:
        raise SystemExit(f"ces-pipeline {' '.join(args)} exited {code}")
    return {"seconds": elapsed, "command_cpu_seconds": cpu}


def rebuild(args: argparse.Namespace) -> dict[str, Any]:
    """`ces-pipeline rebuild` over the corpus's days: Dagster runs over ranges of partitions."""
    work = Path(args.work)
    lake_root = link_raw(args.lake, work)
    partitions = partitions_of(lake_root, args.partitions)
    timing = _command("rebuild", partitions, work, lake_root, profile=args.profile)
    return {**timing, "partitions": len(partitions), **warehouse_rows(work)}


def ingest(args: argparse.Namespace) -> dict[str, Any]:
    """`ces-pipeline ingest` against the simulator serving the corpus."""
    work = Path(args.work)
    partitions = partitions_of(args.lake, args.partitions)
    timing = _command(
        "ingest",
        partitions,
        work,
        str(work / "lake"),
        profile=args.profile,
        CES_MCP_URL=args.url,
        CES_MAX_RPS=str(args.max_rps),
    )
    return {**timing, "partitions": len(partitions), **warehouse_rows(work)}


def duckdb_read_json(args: argparse.Namespace) -> dict[str, Any]:
    import duckdb

    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake
    from pipelines.sqlfiles import sql_text

    lake = Lake(args.lake)
    files = [
        lake.raw_path(CONVERSATIONS_DATASET, app, day) for app, day in lake.raw_partitions("conversations")
    ]
    listing = "[" + ", ".join("'" + path.replace("'", "''") + "'" for path in files) + "]"
    sql = (SQL_DIR / "duckdb_flatten.sql").read_text().format(files=listing)
    # DuckDB as it comes (its own memory limit and threads, not the ones the pipeline's loads
    # get), into plain tables made by the project's DDL.
    path = str(Path(args.work) / "warehouse.duckdb")
    started = time.perf_counter()
    with duckdb.connect(path) as conn:
        for table in TABLES:
            conn.execute(sql_text(f"tables/{table}.sql"))
        conn.execute(sql)
    elapsed = time.perf_counter() - started
    return {"seconds": elapsed, "files": len(files), "rows": warehouse_counts(path)}


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
        "rows": warehouse_counts(str(work / "warehouse.duckdb")),
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
    records = list(
        lake.read_jsonl(lake.raw_path(CONVERSATIONS_DATASET, args.app, date.fromisoformat(args.day)))
    )
    assert records and records[0]["tool"] == LIST_CONVERSATIONS
    return max(0, requests - len(records))


APPROACHES = {
    "backfill": backfill,
    "rebuild": rebuild,
    "ingest": ingest,
    "duckdb": duckdb_read_json,
    "dlt": dlt_pipeline,
    "ratelimited": rate_limited,
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
