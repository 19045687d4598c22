"""One benchmark approach per process: `python -m bench.approaches NAME --lake … --work …`.

Each approach turns the raw lake's conversations into the warehouse's conversation tables and
prints one JSON line: what it did, its wall time, and its row counts per table. The runner
(`bench.run`) measures CPU time and peak memory from outside.

- `rebuild`: the project's rebuild path over every partition: the flatten step (raw lake →
  Parquet) in a pool of worker processes, one partition per task, and the load step
  (Parquet → warehouse) in the main process as each partition completes.
- `ingest`: the project's bulk ingest against a running simulator: fetch (HTTP → raw lake)
  and flatten in one pass in the workers, load in the main process.
- `duckdb`: DuckDB's own `read_json` flattening the same files into the same tables
  (`bench/sql/duckdb_flatten.sql`).
- `dlt`: a dlt pipeline loading the same rows into DuckDB with its Parquet loader.
- `ratelimited`: the fetch alone with the request rate capped, recording when each request
  was granted, to show whether requests go out back to back at the allowed rate.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

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


def _link_raw(lake_root: str, work: Path) -> str:
    """A fresh lake under `work` whose raw records are the corpus's (a symlink, nothing copied)."""
    lake = work / "lake"
    lake.mkdir(parents=True, exist_ok=True)
    raw = lake / "raw"
    if not raw.exists():
        raw.symlink_to(Path(lake_root).resolve() / "raw", target_is_directory=True)
    return str(lake)


def _warehouse_counts(path: str) -> dict[str, int]:
    from pipelines.warehouse.duck import Warehouse

    counts = Warehouse(path).row_counts()
    return {table: counts[table] for table in TABLES}


# -- the project's paths ------------------------------------------------------------------------


def _backfill(lake_root: str, warehouse_path: str, partitions, workers: int, task=None, *task_args: Any):
    """The project's backfill driver: flatten (or `task`) in worker processes, partitions loaded
    in groups here as they finish."""
    from pipelines.ingest.backfill import backfill_partitions, flatten_task
    from pipelines.lake.store import Lake
    from pipelines.warehouse.duck import Warehouse

    days = [(app, date.fromisoformat(day)) for app, day in partitions]
    return backfill_partitions(
        Lake(lake_root),
        Warehouse(warehouse_path),
        days,
        workers=workers,
        task=task or flatten_task,
        task_args=task_args,
        start_method="fork",  # the workers as this process's children: their CPU time is measured
    )


def _partitions(lake_root: str, limit: int | None = None) -> list[tuple[str, str]]:
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    found = [(app, day.isoformat()) for app, day in Lake(lake_root).raw_partitions(CONVERSATIONS_DATASET)]
    # Interleave apps, so that a prefix of the list spreads over apps like the whole does.
    found.sort(key=lambda item: (item[1], item[0]))
    return found[:limit] if limit else found


def _import_worker_modules() -> None:
    """Import what the workers run before the clock starts, as the other approaches import
    theirs: seconds measure the work, the process's wall and CPU time include everything."""
    from pipelines.ingest.backfill import import_worker_modules

    import_worker_modules()


def rebuild(args: argparse.Namespace) -> dict[str, Any]:
    lake_root = _link_raw(args.lake, Path(args.work))
    warehouse = str(Path(args.work) / "warehouse.duckdb")
    partitions = _partitions(lake_root, args.partitions)
    _import_worker_modules()
    started = time.perf_counter()
    done = _backfill(lake_root, warehouse, partitions, args.workers)
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "partitions": len(partitions),
        "workers": args.workers,
        "loads": done.loads,
        "rows": _warehouse_counts(warehouse),
        "partition_rows": {f"{app}|{day}": s["rows"] for (app, day), s in done.partitions.items()},
    }


def ingest(args: argparse.Namespace) -> dict[str, Any]:
    """The bulk ingest's workers (`pipelines.ingest.stream`): fetch and flatten in one pass."""
    from pipelines.config import CesSettings
    from pipelines.ingest.stream import ingest_task

    work = Path(args.work)
    lake_root = str(work / "lake")
    warehouse = str(work / "warehouse.duckdb")
    partitions = _partitions(args.lake, args.partitions)
    _import_worker_modules()
    started = time.perf_counter()
    settings = CesSettings(mcp_url=args.url, max_rps=args.max_rps, page_size=100)
    done = _backfill(lake_root, warehouse, partitions, args.workers, ingest_task, settings)
    results = list(done.partitions.values())
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "partitions": len(partitions),
        "workers": args.workers,
        "loads": done.loads,
        "requests": sum(r["requests"] for r in results),
        "hydrated": sum(r["hydrated"] for r in results),
        "bytes_received": sum(r["bytes_received"] for r in results),
        "rows": _warehouse_counts(warehouse),
        "partition_rows": {f"{app}|{day}": s["rows"] for (app, day), s in done.partitions.items()},
    }


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
    # DuckDB as it comes: its own memory limit (80% of RAM), not the one the pipeline's loads get.
    with duckdb.connect() as defaults:
        (memory_limit,) = defaults.execute("SELECT current_setting('memory_limit')").fetchone()
    warehouse = Warehouse(
        str(Path(args.work) / "warehouse.duckdb"), duckdb_config={"memory_limit": memory_limit}
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


class _RecordingLimiter:
    """The real limiter, noting the clock time each permit was granted for."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.granted: list[float] = []

    def acquire(self) -> float:
        granted = self.inner.acquire()
        self.granted.append(granted)
        return granted


def rate_limited(args: argparse.Namespace) -> dict[str, Any]:
    from pipelines.ces.client import CesMcpClient
    from pipelines.ces.ratelimit import RateLimiter
    from pipelines.config import CesSettings
    from pipelines.ingest.fetch import fetch_conversation_partition
    from pipelines.lake.store import Lake

    app, day = args.app, date.fromisoformat(args.day)
    settings = CesSettings(mcp_url=args.url, apps=(app,), max_rps=args.max_rps, page_size=args.page_size)
    limiter = _RecordingLimiter(RateLimiter(args.max_rps))
    started = time.perf_counter()
    with CesMcpClient(settings, rate_limiter=limiter) as client:
        fetched = fetch_conversation_partition(
            client, Lake(str(Path(args.work) / "lake")), app, day, page_size=args.page_size
        )
    elapsed = time.perf_counter() - started
    granted = limiter.granted
    interval = 1.0 / args.max_rps
    gaps = [later - earlier for earlier, later in itertools.pairwise(granted)]
    # Nothing can be asked for before the first page arrives (the page says what to hydrate
    # and where the next page is): that wait is the first page's latency, reported apart.
    first_wait, steady = (gaps[0], gaps[1:]) if gaps else (0.0, [])
    after_first = granted[1:]
    return {
        "seconds": elapsed,
        "max_rps": args.max_rps,
        "requests": len(granted),
        "pages": fetched.pages,
        "hydrated": fetched.hydrated,
        "first_page_wait_ms": 1000 * first_wait,
        "achieved_rps": (len(after_first) - 1) / (after_first[-1] - after_first[0])
        if len(after_first) > 1
        else 0.0,
        "interval_ms": 1000 * interval,
        "max_gap_ms": 1000 * max(steady, default=0.0),
        "gaps_over_1_5_intervals": sum(gap > 1.5 * interval for gap in steady),
        "idle_seconds": sum(max(0.0, gap - interval) for gap in steady),
    }


APPROACHES = {
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
    parser.add_argument("--page-size", type=int, default=100)
    args = parser.parse_args(argv)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    result = APPROACHES[args.approach](args)
    result["finished_at"] = datetime.now(UTC).isoformat()
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
