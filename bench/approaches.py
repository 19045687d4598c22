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
- `ratelimited`: the fetch alone with the request rate capped, recording when each request
  was granted, to show whether requests go out back to back at the allowed rate.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
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


# -- the project's paths: the default commands, as a user runs them ---------------------------


def _partitions(lake_root: str, limit: int | None = None) -> list[tuple[str, str]]:
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    found = [(app, day.isoformat()) for app, day in Lake(lake_root).raw_partitions(CONVERSATIONS_DATASET)]
    # Interleave apps, so that a prefix of the list spreads over apps like the whole does.
    found.sort(key=lambda item: (item[1], item[0]))
    return found[:limit] if limit else found


def _command(name: str, partitions: list[tuple[str, str]], work: Path, lake_root: str, **env: str) -> float:
    """`ces-pipeline NAME --since … --until …` over the partitions' days and apps, in this process
    (its Dagster runs in an instance of its own under `work`); returns its wall time."""
    from datetime import timedelta

    from pipelines.cli import main as cli_main

    days = sorted({date.fromisoformat(day) for _, day in partitions})
    apps = sorted({app for app, _ in partitions})
    (work / "dagster_home").mkdir(parents=True, exist_ok=True)  # the project's instance settings
    shutil.copy(
        Path(__file__).resolve().parent.parent / "dagster_home" / "dagster.yaml", work / "dagster_home"
    )
    os.environ.update(
        DAGSTER_HOME=str(work / "dagster_home"),
        CES_LAKE=lake_root,
        CES_WAREHOUSE=str(work / "warehouse.duckdb"),
        CES_APPS=",".join(apps),
        **env,
    )
    args = [name, "--since", str(days[0]), "--until", str(days[-1] + timedelta(days=1)), "--skip-evaluations"]
    started = time.perf_counter()
    code = cli_main(args)
    elapsed = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"ces-pipeline {' '.join(args)} exited {code}")
    return elapsed


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
    elapsed = _command("rebuild", partitions, work, lake_root)
    warehouse = str(work / "warehouse.duckdb")
    return {
        "seconds": elapsed,
        "partitions": len(partitions),
        "rows": _warehouse_counts(warehouse),
        "partition_rows": _partition_rows(warehouse),
    }


def ingest(args: argparse.Namespace) -> dict[str, Any]:
    """`ces-pipeline ingest` against the simulator serving the corpus."""
    work = Path(args.work)
    partitions = _partitions(args.lake, args.partitions)
    elapsed = _command(
        "ingest", partitions, work, str(work / "lake"), CES_MCP_URL=args.url, CES_MAX_RPS=str(args.max_rps)
    )
    warehouse = str(work / "warehouse.duckdb")
    return {
        "seconds": elapsed,
        "partitions": len(partitions),
        "rows": _warehouse_counts(warehouse),
        "partition_rows": _partition_rows(warehouse),
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
    warehouse = Warehouse(str(Path(args.work) / "warehouse.duckdb"), write_memory_limit=memory_limit)
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
