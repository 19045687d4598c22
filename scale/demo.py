"""`make scale-demo`: the pipeline as it runs beyond one machine, on local stand-ins for every
service. It starts PostgreSQL (Dagster's storage, the DuckLake catalog, the shared request
budget), an S3-compatible server (the lake and the warehouse's data files), the CES simulator
and a Dagster daemon; `ces-pipeline ingest` queues one run per app and day, the daemon runs
several at once while a reader queries the warehouse; then it prints what each side saw and
stops everything it started."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import date, timedelta
from pathlib import Path

import dagster as dg
import duckdb
from rich.console import Console
from rich.table import Table

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.config import Settings
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.ducklake import DuckLakeMissingError
from scale.servers import (
    ServerUnavailable,
    create_database,
    dagster_daemon,
    dagster_instance_at,
    libpq_url,
    object_store,
    postgres_server,
)

HERE = Path(__file__).resolve().parent
console = Console(stderr=True)


class Reader(threading.Thread):
    """A dashboard's view of the warehouse: a read-only connection opened, queried, closed, again
    and again while the loads run; what it saw, and every error."""

    def __init__(self, warehouse: Warehouse):
        super().__init__(name="reader", daemon=True)
        self.warehouse = warehouse
        self.stop = threading.Event()
        self.queries = 0
        self.seen: list[int] = []
        self.errors: list[str] = []

    def run(self) -> None:
        while not self.stop.wait(0.5):
            try:
                if self.warehouse.exists():
                    with self.warehouse.connect(read_only=True) as conn:
                        self.seen.append(conn.execute("SELECT count(*) FROM conversations").fetchone()[0])
                    self.queries += 1
            except (DuckLakeMissingError, duckdb.CatalogException) as exc:
                if self.seen:  # before the first load made the tables: a dashboard with no data yet
                    self.errors.append(f"{type(exc).__name__}: {exc}")
            except Exception as exc:  # reported at the end: a reader must never fail
                self.errors.append(f"{type(exc).__name__}: {exc}")

    def __enter__(self) -> Reader:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.join(timeout=30)


def most_runs_at_once(instance: dg.DagsterInstance) -> int:
    """The most ingest runs the instance recorded as executing at the same moment."""
    records = instance.get_run_records(dg.RunsFilter(job_name="ingest_conversations"))
    spans = [(r.start_time, r.end_time) for r in records if r.start_time and r.end_time]
    return max((sum(s <= start < e for s, e in spans) for start, _ in spans), default=0)


@contextmanager
def services(work: Path, args: argparse.Namespace) -> Iterator[dict[str, str]]:
    """Every service started, the environment that points the pipeline at them."""
    with ExitStack() as stack:
        console.print("starting PostgreSQL, the S3-compatible server and the CES simulator…")
        postgres = stack.enter_context(postgres_server())
        store = stack.enter_context(object_store("s3"))
        first = date.fromisoformat(args.start_date)
        scale = SimulatorScale(
            seed=7, apps=args.apps, days=args.days, start_date=first, conversations_per_day=args.conversations
        )
        sim = stack.enter_context(running_simulator(SimulatorConfig(scale=scale)))
        home = work / "dagster_home"
        home.mkdir()
        for name in ("dagster.yaml", "workspace.yaml"):
            shutil.copy(HERE / name, home / name)
        env = {key: value for key, value in os.environ.items() if not key.startswith(("CES_", "DAGSTER_"))}
        env |= store.env | {
            "PYTHONPATH": str(HERE.parent),
            "DAGSTER_HOME": str(home),
            "DAGSTER_POSTGRES_URL": libpq_url(create_database(postgres, "dagster"), "postgresql+psycopg2"),
            "CES_MCP_URL": sim.url,
            "CES_APPS": ",".join(sim.apps),
            "CES_START_DATE": first.isoformat(),
            "CES_LAKE": store.lake(),
            "CES_WAREHOUSE": f"ducklake:postgres:{create_database(postgres, 'warehouse')}",
            "CES_RATE_LIMIT_POSTGRES": create_database(postgres, "budget"),
            "CES_MAX_RPS": str(args.max_rps),
            "CES_DAYS_PER_RUN": "1",
            "CES_QUEUE_RUNS": "true",
        }
        console.print("starting the Dagster daemon (PostgreSQL storage, QueuedRunCoordinator)…")
        stack.enter_context(dagster_daemon(env, work / "daemon.log"))
        yield env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=2)
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--conversations", type=int, default=40, help="per app and day")
    parser.add_argument("--start-date", default="2026-11-01")
    parser.add_argument("--max-rps", type=float, default=20, help="the request budget every run shares")
    args = parser.parse_args(argv)
    # SIGTERM ends the demo as Ctrl-C does, every service it started stopped on the way out (a
    # shell's background job inherits SIGINT ignored: restored, as for `ces-pipeline`).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    work = Path(tempfile.mkdtemp(prefix="ces-scale-demo-"))
    try:
        with services(work, args) as env:
            until = date.fromisoformat(args.start_date) + timedelta(days=args.days)
            command = [sys.executable, "-m", "pipelines.cli", "ingest", "--since", args.start_date]
            command += ["--until", until.isoformat()]
            os.environ.update(env)  # the reader reaches the warehouse as the runs do
            warehouse = Warehouse.from_settings(Settings.from_env().storage)
            console.print(f"$ ces-pipeline ingest --since {args.start_date} --until {until}")
            started = time.monotonic()
            with Reader(warehouse) as reader:
                code = _ingest(command, env, work)
            elapsed = time.monotonic() - started
            with dagster_instance_at(env) as instance:
                at_once = most_runs_at_once(instance)
            report(warehouse, reader, at_once, elapsed)
            if reader.errors or at_once < 2:
                code = code or 1
    except ServerUnavailable as exc:
        console.print(f"[red]cannot run the scale demo here: {exc}")
        return 1
    except KeyboardInterrupt:
        code = 130
    finally:
        shutil.rmtree(work, ignore_errors=True)
    console.print("stopped PostgreSQL, the S3-compatible server, the simulator and the daemon.")
    return code


def _ingest(command: list[str], env: dict[str, str], cwd: Path) -> int:
    """Run `ces-pipeline ingest`; on Ctrl-C or SIGTERM (which reach it as well, from the terminal
    or to the group) it has a few seconds to cancel its queued runs before it is killed."""
    with subprocess.Popen(command, env=env, cwd=cwd) as ingest:
        try:
            return ingest.wait()
        except KeyboardInterrupt:
            try:
                ingest.wait(timeout=3)
            except subprocess.TimeoutExpired:
                ingest.kill()
            raise


def report(warehouse: Warehouse, reader: Reader, at_once: int, elapsed: float) -> None:
    table = Table("table", "rows", title="DuckLake warehouse (catalog on PostgreSQL, data files on S3)")
    for name, rows in warehouse.row_counts().items():
        table.add_row(name, str(rows))
    Console().print(table)
    console.print(f"ingest: {elapsed:.1f} s, at most {at_once} runs executing at once")
    steps = sorted(set(reader.seen))
    console.print(
        f"reader: {reader.queries} queries during the loads, {len(reader.errors)} errors, "
        f"conversation counts seen: {', '.join(map(str, steps)) or 'none'}"
    )
    for error in reader.errors[:5]:
        console.print(f"[red]reader error: {error}")


if __name__ == "__main__":
    sys.exit(main())
