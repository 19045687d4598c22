"""`simulate`, `demo` and `dev`: the local CES simulator, alone, loaded, or with the Dagster UI."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from rich.markup import escape

from pipelines.cli.common import (
    console,
    days_between,
    out,
    parse_day,
    parse_instant,
    print_rows,
    serve_until_stopped,
)
from pipelines.cli.loads import load_conversations, load_evaluations
from pipelines.config import CesSettings, OrchestrationSettings, Settings
from pipelines.errors import UsageError

if TYPE_CHECKING:
    from pipelines.ces.simulator import SimulatorHandle

DEMO_DAYS = 10
"""The simulator's days by default: enough for the anomaly views, which need a week before a day,
to find the incident the simulator plants on the tenth (`SimulatorScale.incident_day`)."""


_SCALE_OPTIONS = ("seed", "apps", "days", "conversations_per_day", "max_turns", "span_depth")
_SERVER_OPTIONS = ("response_mode", "require_session", "as_of", "faults")
"""The options of `add_scale_options`: the simulator's corpus (`SimulatorScale`), then its server."""


def _start_date(args: argparse.Namespace) -> dict[str, date]:
    """The simulator's first day: `--start-date`; else, on the wall clock (`--as-of now`), the day
    that makes its last day today, so conversations arrive while it serves; else (none) the
    corpus's own, the demo's first day, which the README's examples name."""
    if args.start_date is None and args.as_of == "now":
        return {"start_date": datetime.now(UTC).date() - timedelta(days=args.days - 1)}
    return {} if args.start_date is None else {"start_date": args.start_date}


def _simulator_config(args: argparse.Namespace):
    from pipelines.ces.simulator import SimulatorConfig, SimulatorScale

    try:
        options = {name: getattr(args, name) for name in _SCALE_OPTIONS}
        scale = SimulatorScale(**options, **_start_date(args))
    except ValueError as exc:  # a corpus no simulator can make: said in the options' words
        said = str(exc)
        for name in _SCALE_OPTIONS:
            said = said.replace(name, f"--{name.replace('_', '-')}")
        raise UsageError(said) from None
    return SimulatorConfig(scale=scale, **{name: getattr(args, name) for name in _SERVER_OPTIONS})


def _faults(spec: str):
    """`--faults SPEC`: the simulator's seeded fault injection (see simulator/server/faults.py)."""
    from pipelines.ces.simulator.server.faults import FaultSpecError, SimulatedFaults

    try:
        return SimulatedFaults(spec)
    except FaultSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_simulate(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.ces.simulator import serve
    from pipelines.ces.simulator.runner import print_endpoint

    def announce(url: str, apps: Sequence[str]) -> None:
        print_endpoint(url, apps)
        console.print(
            f"ingest from it: export CES_MCP_URL={url} CES_APPS={','.join(apps)}",
            soft_wrap=True,
            highlight=False,
        )

    if args.faults:
        console.print(f"injecting faults: {args.faults.spec.describe()}")
    return serve_until_stopped(
        lambda: serve(_simulator_config(args), host=args.host, port=args.port, announce=announce),
        "the simulator",
    )


def demo_load(settings: Settings, sim: SimulatorHandle) -> tuple[Settings, int]:
    """Point the settings at the simulator and ingest its days. The simulator's endpoint and apps
    (no CES_EVALUATION_RUNS: those name other apps' runs); unless set, no quota (a local server)
    and partitions from the demo's first day, not 2024's."""
    from pipelines.orchestration.partitions import plan_runs

    ces, orchestration = settings.ces, settings.orchestration
    quota = {} if "max_rps" in ces.model_fields_set else {"max_rps": 200.0}
    url, apps, first = sim.url, sim.apps, sim.scale.start_date
    start = {} if "start_date" in orchestration.model_fields_set else {"start_date": first}
    settings = dataclasses.replace(
        settings,
        ces=CesSettings(**{**dict(ces), "mcp_url": url, "apps": tuple(apps), "evaluation_runs": (), **quota}),
        orchestration=OrchestrationSettings(**{**dict(orchestration), **start}),
    )
    console.print(f"Simulator at {url} serving {len(apps)} apps")
    window = days_between(first, first + timedelta(days=sim.scale.days))
    ranges = plan_runs([(app, day) for day in window for app in apps], orchestration.days_per_run)
    code = max(load_conversations(settings, "ingest", ranges), load_evaluations(settings, apps))
    return settings, code


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.ces.simulator import running_simulator
    from pipelines.report import write_report
    from pipelines.warehouse.duck import Warehouse
    from pipelines.warehouse.queries import run_query

    with running_simulator(_simulator_config(args)) as sim:
        settings, code = demo_load(settings, sim)
    warehouse = Warehouse.from_settings(settings.storage)
    out.print(f"[bold]Rows per table of the warehouse {escape(warehouse.path)}")
    print_rows(["table", "rows"], list(warehouse.row_counts().items()), "table")
    columns, rows = run_query(warehouse, "daily_volume", {})
    out.print("[bold]Conversations per day (sql/queries/daily_volume.sql)")
    print_rows(columns, rows, "table")
    columns, rows = run_query(warehouse, "anomalies", {})
    out.print(
        "[bold]Days that stand out from the 28 days before them (sql/queries/anomalies.sql); the simulator "
        "plants an incident on its tenth day"
    )
    print_rows(columns, rows, "table")
    report = write_report(warehouse, settings.storage.report_path, {})
    out.print(f"Dashboard: {report.path} ({report.charts} charts, opens offline)", markup=False)
    out.print("Agents: `ces-pipeline mcp` serves this warehouse as read-only MCP tools", markup=False)
    return code


def cmd_dev(args: argparse.Namespace, settings: Settings) -> int:
    """The simulator and the Dagster UI together, on the demo's data: the demo's days are
    ingested first (idempotent), then `dagster dev` serves the UI and the daemon with the
    simulator as the CES endpoint, so schedules, sensors and backfills work."""
    import subprocess

    from pipelines import stop
    from pipelines.ces.simulator import running_simulator
    from pipelines.listening import ListenError, listening_socket
    from pipelines.orchestration.runs import dagster_home

    try:  # `dagster dev` would log the failure among its daemon's lines and go on without a UI
        listening_socket("127.0.0.1", args.ui_port).close()
    except ListenError as exc:
        another = f"ces-pipeline dev --ui-port {args.ui_port + 1}"
        raise ListenError(f"{exc} (a Dagster UI already?): stop it, or use another port: {another}") from None
    with running_simulator(_simulator_config(args)) as sim:
        settings, _ = demo_load(settings, sim)
        console.print(
            f"Dagster UI on http://127.0.0.1:{args.ui_port} (Ctrl-C stops the UI and the simulator)"
        )
        dagster_dev = [sys.executable, "-m", "dagster", "dev", "-m", "pipelines.definitions"]
        # Dagster takes its instance's folder as an absolute path only (`./dagster_home` unless set)
        env = settings.environment() | {"DAGSTER_HOME": str(dagster_home(settings))}
        # `dagster dev` warns on every start that `dg dev` supersedes it: a tool not installed here
        env["PYTHONWARNINGS"] = ",".join(filter(None, [env.get("PYTHONWARNINGS"), _DEV_SUPERSEDED]))
        # `dagster dev` leads a process group of its own, which holds its servers and the runs its
        # daemon launches: Ctrl-C reaches this process alone, which ends the whole group with
        # SIGTERM (servers still importing would print a traceback each on Ctrl-C's SIGINT).
        ui = subprocess.Popen([*dagster_dev, "-p", str(args.ui_port)], env=env, process_group=0)
        try:
            while (code := ui.poll()) is None:  # until `dagster dev` ends, or a stop comes
                stop.pause(0.2)
            return code
        except KeyboardInterrupt:
            return 0
        finally:
            stop.end_group(ui, DEV_STOP_GRACE_SECONDS)


_DEV_SUPERSEDED = "ignore:Function `dev_command` is superseded"
"""A warning filter (`-W` syntax): the start of the message of Dagster's SupersessionWarning."""
DEV_STOP_GRACE_SECONDS = 15.0
"""How long `dagster dev` has to stop its servers and their runs before what is left is killed
(on 2 cores, 4-6 s)."""


def add_scale_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=7, help="data seed (same seed, same data)")
    parser.add_argument("--apps", type=int, default=2, help="number of apps")
    parser.add_argument("--days", type=int, default=DEMO_DAYS, help="number of days of conversations")
    parser.add_argument(
        "--start-date",
        type=parse_day,
        help="first day (UTC); default: the demo's, or with --as-of now the day that makes the last today",
    )
    parser.add_argument("--conversations-per-day", type=int, default=24, help="per app and day")
    parser.add_argument("--max-turns", type=int, default=8, help="maximum turns per conversation")
    parser.add_argument("--span-depth", type=int, default=3, help="maximum depth of a turn's span tree")
    parser.add_argument(
        "--response-mode",
        choices=("json", "sse", "mixed"),
        default="mixed",
        help="how answers are framed: JSON bodies, SSE streams, or both by turns (the default)",
    )
    parser.add_argument("--require-session", action="store_true", help="demand initialize + Mcp-Session-Id")
    parser.add_argument(
        "--as-of",
        type=parse_instant,
        help="the server's clock (UTC, e.g. 2026-11-03T09:00): later or late-arriving conversations "
        "are not served yet, open ones have no endTime; now: the wall clock, so conversations arrive "
        "as time passes (its days end today unless --start-date); default: everything, finished",
    )
    parser.add_argument(
        "--faults",
        type=_faults,
        metavar="SPEC",
        help="inject seeded faults, e.g. 503:0.1,429:0.05,reset:0.02,cut-sse:0.05,seed=7; kinds a client "
        "gets through (all): 429, 500, 502, 503, 504, 403-quota, 503-retry-info, rpc-error, tool-error, "
        "reset, slow, cut-sse, bad-json, expire-token, dup, repeat-page; a broken server: 403-disabled, "
        "drip, huge, ignore-filter, empty-forever, live-by-default; other legal shapes (shapes): "
        "sse-priming, enum-numbers, new-enums, null-fields, lenient-formats, loose-times, no-traces, "
        "sparse-ids, late-run-name; options: seed, "
        "limit, retry-after, slow-seconds, drip-bps, huge-mb",
    )
