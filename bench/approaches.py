"""One benchmark approach per process: `python -m bench.approaches NAME --lake … --work …`.

Each approach turns the raw lake's conversations into the warehouse's conversation tables and
prints one JSON line: what it did, its wall time, and its row counts per table. The runner
(`bench.run`) measures CPU time and peak memory from outside.

- `rebuild`: the project's rebuild path over every partition: the flatten step (raw lake →
  Parquet) in a pool of worker processes, one partition per task, and the load step
  (Parquet → warehouse) in the main process as each partition completes.
- `ingest`: the project's ingest path against a running simulator: fetch (HTTP → raw lake)
  and flatten in the workers, load in the main process.
- `duckdb`: DuckDB's own `read_json` flattening the same files into the same tables
  (`bench/sql/duckdb_flatten.sql`).
- `dlt`: a dlt pipeline loading the same rows into DuckDB with its Parquet loader.
- `ratelimited`: the fetch alone with the request rate capped, recording when each request
  was granted, to show whether requests go out back to back at the allowed rate.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, date, datetime
from multiprocessing import get_context
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


def _flatten_partition(lake_root: str, app: str, day: str) -> dict[str, Any]:
    """Worker: the flatten step of one partition (raw lake → Parquet files)."""
    from pipelines.ingest.flatten import flatten_conversation_partition
    from pipelines.lake.store import Lake

    started = time.perf_counter()
    flattened = flatten_conversation_partition(Lake(lake_root), app, date.fromisoformat(day))
    return {
        "app": app,
        "day": day,
        "rows": flattened.rows,
        "flatten_seconds": time.perf_counter() - started,
    }


def _ingest_partition(url: str, max_rps: float, lake_root: str, app: str, day: str) -> dict[str, Any]:
    """Worker: the fetch and flatten steps of one partition (API → raw lake → Parquet files)."""
    from pipelines.ces.client import CesMcpClient
    from pipelines.config import CesSettings
    from pipelines.ingest.fetch import fetch_conversation_partition
    from pipelines.lake.store import Lake

    settings = CesSettings(mcp_url=url, apps=(app,), max_rps=max_rps, page_size=100)
    lake = Lake(lake_root)
    started = time.perf_counter()
    cpu_started = time.process_time()
    with CesMcpClient(settings) as client:
        fetched = fetch_conversation_partition(client, lake, app, date.fromisoformat(day), page_size=100)
        stats = client.stats
    fetch_seconds = time.perf_counter() - started
    fetch_cpu = time.process_time() - cpu_started
    return {
        **_flatten_partition(lake_root, app, day),
        "fetch_seconds": fetch_seconds,
        "fetch_cpu_seconds": fetch_cpu,
        "requests": stats.requests,
        "hydrated": fetched.hydrated,
        "pages": fetched.pages,
        "bytes_received": stats.bytes_received,
    }


_PRELOAD = ["pipelines.ingest.fetch", "pipelines.ingest.flatten", "pyarrow.compute", "pyarrow.parquet"]


def _run_partitions(task, partitions, workers: int, lake_root: str, warehouse_path: str, *args: Any):
    """Run `task` per partition in `workers` processes; load each partition into the warehouse
    here as it completes, while the workers go on (DuckDB has one writer: loads are serial).

    Workers are forked from this process once it has imported the pipeline (and before it
    opens DuckDB), so they share those pages; being its children, their CPU time is counted.
    """
    from pipelines.ingest.load import load_conversation_partition
    from pipelines.lake.store import Lake
    from pipelines.warehouse.duck import Warehouse

    for module in _PRELOAD:
        importlib.import_module(module)
    lake, warehouse = Lake(lake_root), Warehouse(warehouse_path)
    context = get_context("fork")
    results = []
    with ProcessPoolExecutor(max_workers=max(1, workers), mp_context=context) as pool:
        futures = [pool.submit(task, *args, lake_root, app, day) for app, day in partitions]
        for future in as_completed(futures):
            result = future.result()
            started = time.perf_counter()
            load_conversation_partition(lake, warehouse, result["app"], date.fromisoformat(result["day"]))
            result["load_seconds"] = time.perf_counter() - started
            results.append(result)
    return results


def _partitions(lake_root: str, limit: int | None = None) -> list[tuple[str, str]]:
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    found = [(app, day.isoformat()) for app, day in Lake(lake_root).raw_partitions(CONVERSATIONS_DATASET)]
    # Interleave apps, so that a prefix of the list spreads over apps like the whole does.
    found.sort(key=lambda item: (item[1], item[0]))
    return found[:limit] if limit else found


def rebuild(args: argparse.Namespace) -> dict[str, Any]:
    lake_root = _link_raw(args.lake, Path(args.work))
    warehouse = str(Path(args.work) / "warehouse.duckdb")
    partitions = _partitions(lake_root)
    started = time.perf_counter()
    results = _run_partitions(_flatten_partition, partitions, args.workers, lake_root, warehouse)
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "partitions": len(partitions),
        "workers": args.workers,
        "flatten_seconds": sum(r["flatten_seconds"] for r in results),
        "load_seconds": sum(r["load_seconds"] for r in results),
        "rows": _warehouse_counts(warehouse),
        "partition_rows": {f"{r['app']}|{r['day']}": r["rows"] for r in results},
    }


def ingest(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work)
    lake_root = str(work / "lake")
    warehouse = str(work / "warehouse.duckdb")
    partitions = _partitions(args.lake, args.partitions)
    started = time.perf_counter()
    results = _run_partitions(
        _ingest_partition, partitions, args.workers, lake_root, warehouse, args.url, args.max_rps
    )
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "partitions": len(partitions),
        "workers": args.workers,
        "fetch_seconds": sum(r["fetch_seconds"] for r in results),
        "fetch_cpu_seconds": sum(r["fetch_cpu_seconds"] for r in results),
        "flatten_seconds": sum(r["flatten_seconds"] for r in results),
        "load_seconds": sum(r["load_seconds"] for r in results),
        "requests": sum(r["requests"] for r in results),
        "hydrated": sum(r["hydrated"] for r in results),
        "bytes_received": sum(r["bytes_received"] for r in results),
        "rows": _warehouse_counts(warehouse),
        "partition_rows": {f"{r['app']}|{r['day']}": r["rows"] for r in results},
    }


# -- DuckDB's own JSON reader -------------------------------------------------------------------


def duckdb_read_json(args: argparse.Namespace) -> dict[str, Any]:
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake
    from pipelines.warehouse.duck import Warehouse

    lake = Lake(args.lake)
    files = [
        lake.raw_path(CONVERSATIONS_DATASET, app, day) for app, day in lake.raw_partitions("conversations")
    ]
    listing = "[" + ", ".join("'" + path.replace("'", "''") + "'" for path in files) + "]"
    sql = (SQL_DIR / "duckdb_flatten.sql").read_text().format(files=listing)
    warehouse = Warehouse(str(Path(args.work) / "warehouse.duckdb"))
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
    return {
        "seconds": elapsed,
        "max_rps": args.max_rps,
        "requests": len(granted),
        "pages": fetched.pages,
        "hydrated": fetched.hydrated,
        "achieved_rps": (len(granted) - 1) / (granted[-1] - granted[0]) if len(granted) > 1 else 0.0,
        "interval_ms": 1000 * interval,
        "max_gap_ms": 1000 * max(gaps, default=0.0),
        "gaps_over_1_5_intervals": sum(gap > 1.5 * interval for gap in gaps),
        "idle_seconds": sum(max(0.0, gap - interval) for gap in gaps),
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
    parser.add_argument("--partitions", type=int, help="ingest only the first N partitions")
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
