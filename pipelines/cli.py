"""`ces-pipeline`: ingest, rebuild, query, report, simulate and demo from the command line."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pipelines.config import CesSettings, ConfigError, Settings, load_dotenv_file

console = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 160)
"""Tables go to stdout; piped output gets a wide fixed width rather than 80 columns."""


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, got {value!r}") from None


def _instant(value: str) -> datetime:
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO date-time such as 2026-11-03T09:00, got {value!r}"
        ) from None
    return instant if instant.tzinfo else instant.replace(tzinfo=UTC)


def _days(since: date, until: date) -> list[date]:
    if until <= since:
        raise UserError(f"--until ({until}) must be after --since ({since})")
    return [since + timedelta(days=i) for i in range((until - since).days)]


# -- ingest / rebuild ---------------------------------------------------------------------------


class UserError(Exception):
    """Something the user asked for cannot be done as asked: one line, exit code 2."""


def _window(settings: Settings, since: date, until: date) -> list[date]:
    """The UTC days [since, until), all of them daily partitions."""
    days = _days(since, until)
    first = settings.orchestration.start_date
    if since < first:
        raise UserError(
            f"--since {since} is before the first daily partition, {first}: set CES_START_DATE={since} "
            "to ingest earlier days"
        )
    last = datetime.now(UTC).date()
    if days[-1] > last:
        raise UserError(f"--until {until} is after tomorrow (UTC): there is nothing to ingest after {last}")
    return days


def _partition_progress() -> Progress:
    """A bar over partitions with a line of counts (the task's `detail` field)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
    )


_JOBS = {"ingest": ("ingest_conversations", "ingested"), "rebuild": ("rebuild_conversations", "rebuilt")}


def _load_conversations(settings: Settings, command: str, partitions: list[tuple[str, date]]) -> int:
    """Run the command's job over the partitions, one run per range, with a live progress display."""
    from pipelines.definitions import build_definitions
    from pipelines.orchestration.launch import PlannedRun, RunOutcome, dagster_instance, execute_runs
    from pipelines.orchestration.partitions import plan_runs, register_apps

    job_name, verb = _JOBS[command]
    orchestration = settings.orchestration
    instance = dagster_instance(orchestration.api_concurrency)
    register_apps(instance, [app for app, _ in partitions])
    ranges = plan_runs(partitions, orchestration.days_per_run)
    totals = {"conversations": 0, "pages": 0, "requests": 0, "rejects": 0}
    failures: list[RunOutcome] = []
    warnings: Counter[str] = Counter()
    started = time.monotonic()
    with _partition_progress() as progress:
        task = progress.add_task(f"{verb} partitions", total=len(partitions), detail=f"{len(ranges)} runs")

        def on_outcome(outcome: RunOutcome) -> None:
            totals["conversations"] += outcome.value("warehouse/conversation_tables", "conversations_rows")
            totals["pages"] += outcome.value("raw/conversation_pages", "pages")
            totals["requests"] += outcome.value("raw/conversation_pages", "requests")
            totals["rejects"] += outcome.value("warehouse/conversation_tables", "rejects_rows")
            if not outcome.success:
                failures.append(outcome)
                progress.console.print(f"[red]✗ {escape(outcome.label)}: {escape(str(outcome.error))}")
            for check in outcome.failed_checks:
                if "(WARN)" in check:
                    warnings[check.removesuffix(" (WARN)")] += 1
                else:
                    progress.console.print(f"[red]check failed for {escape(outcome.label)}: {escape(check)}")
            rate = totals["conversations"] / max(time.monotonic() - started, 1e-9)
            detail = f"{totals['conversations']} conversations · {rate:.0f}/s"
            if command == "ingest":
                detail = f"{totals['pages']} pages · {totals['requests']} requests · {detail}"
            progress.update(task, advance=outcome.partitions, detail=detail)

        execute_runs(
            build_definitions(settings),
            job_name,
            [PlannedRun.for_range(run) for run in ranges],
            instance=instance,
            on_outcome=on_outcome,
        )
    if totals["rejects"]:
        console.print(f"[yellow]{totals['rejects']} objects rejected: see the rejects table.")
    for check, count in sorted(warnings.items()):
        console.print(f"[yellow]warning: {escape(check)} in {count} of {len(ranges)} runs.")
    if failures:
        console.print(f"[red]{len(failures)} of {len(ranges)} runs failed. Retry one alone with:")
        by_label = {run.label: run for run in ranges}
        for failure in failures:
            run = by_label[failure.label]
            window = f"--since {run.first} --until {run.last + timedelta(days=1)}"
            console.print(f"  ces-pipeline {command} {window} --app {run.app}", soft_wrap=True, markup=False)
        return 1
    console.print(
        f"[green]{verb} {len(partitions)} partitions in {len(ranges)} run{'s' if len(ranges) != 1 else ''}: "
        f"{totals['conversations']} conversations loaded."
    )
    return 0


def _ingest_evaluation_runs(settings: Settings, apps: Sequence[str], run_config: dict | None = None) -> int:
    """Run the evaluation run job for each app and report what it loaded."""
    from pipelines.definitions import build_definitions
    from pipelines.orchestration.launch import PlannedRun, dagster_instance, execute_runs
    from pipelines.orchestration.partitions import register_apps

    instance = dagster_instance(settings.orchestration.api_concurrency)
    register_apps(instance, apps)
    with console.status("fetching evaluation runs"):
        outcomes = execute_runs(
            build_definitions(settings),
            "ingest_evaluation_runs",
            [PlannedRun.for_partition(app) for app in apps],
            instance=instance,
            run_config=run_config,
        )
    failed = [outcome for outcome in outcomes if not outcome.success]
    for outcome in failed:
        console.print(f"[red]✗ evaluation runs of {escape(outcome.label)}: {escape(str(outcome.error))}")
    runs = sum(outcome.value("warehouse/evaluation_tables", "evaluation_runs_rows") for outcome in outcomes)
    results = sum(
        outcome.value("warehouse/evaluation_tables", "evaluation_results_rows") for outcome in outcomes
    )
    console.print(
        f"[green]evaluation runs: {runs} loaded, {results} results, from {len(outcomes) - len(failed)} apps."
    )
    return 1 if failed else 0


def _apps(settings: Settings, chosen: Sequence[str] | None) -> list[str]:
    apps = list(chosen or settings.ces.apps)
    if not apps:
        raise UserError(
            "CES_APPS is not set: name the apps to ingest, e.g. "
            "export CES_APPS=projects/my-project/locations/us/apps/my-app"
        )
    CesSettings(apps=tuple(apps))  # validates --app values like CES_APPS
    return apps


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    apps = _apps(settings, args.app)
    partitions = [(app, day) for day in _window(settings, args.since, args.until) for app in apps]
    conversations = _load_conversations(settings, "ingest", partitions)
    evaluations = 0 if args.skip_evaluations else _ingest_evaluation_runs(settings, apps)
    return max(conversations, evaluations)


def cmd_evaluate(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.ces.client import CesMcpClient
    from pipelines.ingest.trigger import EvaluationTriggerError, start_evaluation
    from pipelines.lake.store import Lake

    evaluations = [e.strip() for e in (args.evaluations or "").split(",") if e.strip()]
    if bool(evaluations) == bool(args.dataset):
        raise UserError("give exactly one of --evaluations a,b or --dataset D")
    lake = Lake(settings.storage.lake)
    try:
        with (
            CesMcpClient(settings.ces) as client,
            console.status("waiting for the evaluation to start") as status,
        ):
            started = start_evaluation(
                client,
                lake,
                args.app,
                evaluations=evaluations or None,
                evaluation_dataset=args.dataset,
                display_name=args.display_name,
                app_version=args.app_version,
                poll_seconds=args.poll_seconds,
                on_operation=lambda name: status.update(f"operation {name}: waiting until done"),
            )
    except EvaluationTriggerError as exc:
        console.print(f"[red]error: {escape(str(exc))}")
        if exc.operation:
            console.print(f"Follow it up with get_operation {exc.operation}; do not re-run blindly.")
        return 1
    out.print(f"operation {started.operation}")
    out.print(f"evaluation run {started.evaluation_run}")
    config = {
        "ops": {"raw__evaluation_runs": {"config": {"names": [started.evaluation_run], "discover": False}}}
    }
    return _ingest_evaluation_runs(settings, [args.app], config)


def cmd_rebuild(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    days = set(_window(settings, args.since, args.until))
    lake = Lake(settings.storage.lake)
    partitions = [
        (app, day)
        for app, day in lake.raw_partitions(CONVERSATIONS_DATASET)
        if day in days and (not args.app or app in args.app)
    ]
    code = 0
    if partitions:
        code = _load_conversations(settings, "rebuild", partitions)
    else:
        console.print(
            f"[yellow]nothing to rebuild: no raw conversation pages in {escape(lake.root)} "
            f"from {args.since} to {args.until}."
        )
    if not args.skip_evaluations:
        from pipelines.ingest.evaluations import rebuild_evaluations
        from pipelines.warehouse.duck import Warehouse

        with console.status("replaying evaluation run fetches"):
            replayed = rebuild_evaluations(lake, Warehouse.from_settings(settings.storage), args.app)
        console.print(f"[green]evaluation runs: {replayed} fetches replayed.")
    return code


# -- query ----------------------------------------------------------------------------------------


def cmd_query(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.warehouse.queries import NamedQueryError, named_queries, parse_param_options, run_query

    try:
        if args.list or not args.name:
            for query in named_queries():
                out.print(f"[bold]{query.name}[/bold]  {escape(query.description)}")
                for parameter in query.parameters:
                    out.print(f"    --param {parameter.signature()}  {parameter.description}", markup=False)
            return 0
        params = parse_param_options(args.param)
        columns, rows = run_query(settings.storage.warehouse, args.name, params)
    except NamedQueryError as exc:
        console.print(f"[red]error: {escape(str(exc))}")
        return 2
    _print_rows(columns, rows, args.format)
    return 0


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.report import ReportError, write_report

    warehouse = settings.storage.warehouse
    target = args.out or settings.storage.report_path
    params = {
        key: value
        for key, value in (("app", args.app), ("since", args.since), ("until", args.until))
        if value is not None
    }
    try:
        with console.status("building the report"):
            report = write_report(warehouse, target, params)
    except ReportError as exc:
        console.print(f"[red]error: {escape(str(exc))}")
        return 2
    console.print(
        f"[green]report written to {escape(report.path)}: {report.charts} charts, {report.size_bytes:,} bytes"
    )
    out.print(report.path, markup=False)
    return 0


def _print_rows(columns: Sequence[str], rows: Sequence[Sequence[object]], fmt: str) -> None:
    if fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    elif fmt == "json":
        print(json.dumps([dict(zip(columns, row, strict=True)) for row in rows], default=str, indent=2))
    else:
        table = Table(*columns)
        for row in rows:
            table.add_row(*("" if value is None else str(value) for value in row))
        out.print(table)


# -- simulate / demo --------------------------------------------------------------------------------


def _simulator_config(args: argparse.Namespace):
    from pipelines.ces.simulator import SimulatorConfig, SimulatorScale

    scale = SimulatorScale(
        seed=args.seed,
        apps=args.apps,
        days=args.days,
        start_date=args.start_date,
        conversations_per_day=args.conversations_per_day,
        max_turns=args.max_turns,
        span_depth=args.span_depth,
    )
    return SimulatorConfig(
        scale=scale,
        response_mode=args.response_mode,
        require_session=args.require_session,
        as_of=args.as_of,
        faults=args.faults,
    )


def _faults(spec: str):
    """`--faults SPEC`: the simulator's seeded fault injection (see simulator/server/faults.py)."""
    from pipelines.ces.simulator.server.faults import FaultSpecError, SimulatedFaults

    try:
        return SimulatedFaults(spec)
    except FaultSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_simulate(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.ces.simulator import serve

    if args.faults:
        console.print(f"injecting faults: {args.faults.spec.describe()}")
    serve(_simulator_config(args), host=args.host, port=args.port)
    return 0


def _demo_load(args: argparse.Namespace, url: str, apps: Sequence[str]) -> tuple[Settings, int]:
    """Point the settings at the simulator (its endpoint and apps, no quota) and ingest its days."""
    os.environ.update(CES_MCP_URL=url, CES_APPS=",".join(apps))
    os.environ.setdefault("CES_MAX_RPS", "200")  # a local server: no quota to respect
    settings = Settings.from_env()
    console.print(f"Simulator at {url} serving {len(apps)} apps")
    first = args.start_date
    window = _days(first, first + timedelta(days=args.days))
    partitions = [(app, day) for day in window for app in apps]
    code = max(_load_conversations(settings, "ingest", partitions), _ingest_evaluation_runs(settings, apps))
    return settings, code


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.ces.simulator import running_simulator
    from pipelines.report import write_report
    from pipelines.warehouse.duck import Warehouse
    from pipelines.warehouse.queries import run_query

    with running_simulator(_simulator_config(args)) as sim:
        settings, code = _demo_load(args, sim.url, sim.apps)
    warehouse = settings.storage.warehouse
    counts = Warehouse.from_settings(settings.storage).row_counts()
    table = Table("table", "rows", title=f"Warehouse {warehouse}")
    for name, count in counts.items():
        table.add_row(name, str(count))
    out.print(table)
    columns, rows = run_query(warehouse, "daily_volume", {})
    out.print("[bold]Conversations per day (sql/queries/daily_volume.sql)")
    _print_rows(columns, rows, "table")
    report = write_report(warehouse, settings.storage.report_path, {})
    out.print(f"Dashboard: {report.path} ({report.charts} charts, opens offline)", markup=False)
    return code


def cmd_dev(args: argparse.Namespace, settings: Settings) -> int:
    """The simulator and the Dagster UI together, on the demo's data: the demo's days are
    ingested first (idempotent), then `dagster dev` serves the UI and the daemon with the
    simulator as the CES endpoint, so schedules, sensors and backfills work."""
    import subprocess

    from pipelines.ces.simulator import running_simulator

    with running_simulator(_simulator_config(args)) as sim:
        _demo_load(args, sim.url, sim.apps)
        console.print(
            f"Dagster UI on http://127.0.0.1:{args.ui_port} (Ctrl-C stops the UI and the simulator)"
        )
        command = [
            sys.executable,
            "-m",
            "dagster",
            "dev",
            "-m",
            "pipelines.definitions",
            "-p",
            str(args.ui_port),
        ]
        with subprocess.Popen(command) as ui:
            try:
                return ui.wait()
            except KeyboardInterrupt:
                ui.terminate()
                ui.wait(timeout=30)
                return 0


# -- wiring -----------------------------------------------------------------------------------------


def _add_scale_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=7, help="data seed (same seed, same data)")
    parser.add_argument("--apps", type=int, default=2, help="number of apps")
    parser.add_argument("--days", type=int, default=3, help="number of days of conversations")
    parser.add_argument("--start-date", type=_day, default=date(2026, 11, 1), help="first day (UTC)")
    parser.add_argument("--conversations-per-day", type=int, default=24, help="per app and day")
    parser.add_argument("--max-turns", type=int, default=8, help="maximum turns per conversation")
    parser.add_argument("--span-depth", type=int, default=3, help="maximum depth of a turn's span tree")
    parser.add_argument("--response-mode", choices=("json", "sse", "mixed"), default="mixed")
    parser.add_argument("--require-session", action="store_true", help="demand initialize + Mcp-Session-Id")
    parser.add_argument(
        "--as-of",
        type=_instant,
        help="the server's clock (UTC, e.g. 2026-11-03T09:00): later or late-arriving conversations "
        "are not served yet, open ones have no endTime; default: everything, finished",
    )
    parser.add_argument(
        "--faults",
        type=_faults,
        metavar="SPEC",
        help="inject seeded faults, e.g. 503:0.1,429:0.05,reset:0.02,cut-sse:0.05,seed=7 (kinds: 429, "
        "500, 502, 503, 504, reset, slow, cut-sse, bad-json, expire-token, dup, repeat-page, all; "
        "options: seed, limit, retry-after, slow-seconds)",
    )


def _add_partition_options(parser: argparse.ArgumentParser) -> None:
    """The options `ingest` and `rebuild` share: the UTC days and the apps."""
    parser.add_argument("--since", type=_day, required=True, help="first UTC day, YYYY-MM-DD")
    parser.add_argument("--until", type=_day, required=True, help="the UTC day after the last (exclusive)")
    parser.add_argument("--skip-evaluations", action="store_true", help="conversations only")
    parser.add_argument(
        "--app", action="append", help="only this app (repeatable); default: every app of CES_APPS"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ces-pipeline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", help="ingest conversations started in [since, until) (UTC)")
    _add_partition_options(ingest)
    ingest.set_defaults(func=cmd_ingest)

    evaluate = commands.add_parser("evaluate", help="start an evaluation run, wait for it to start, load it")
    evaluate.add_argument("--app", required=True, help="projects/{p}/locations/{l}/apps/{a}")
    evaluate.add_argument("--evaluations", help="comma-separated evaluation ids or names")
    evaluate.add_argument("--dataset", help="evaluation dataset id or name")
    evaluate.add_argument("--app-version")
    evaluate.add_argument("--display-name")
    evaluate.add_argument("--poll-seconds", type=float, default=2.0)
    evaluate.set_defaults(func=cmd_evaluate)

    rebuild = commands.add_parser(
        "rebuild", help="re-derive Parquet and warehouse from the raw lake (no API)"
    )
    _add_partition_options(rebuild)
    rebuild.set_defaults(func=cmd_rebuild)

    query = commands.add_parser("query", help="run a named query from sql/queries/")
    query.add_argument("name", nargs="?")
    query.add_argument("--format", choices=("table", "csv", "json"), default="table")
    query.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    query.add_argument("--list", action="store_true", help="list the named queries")
    query.set_defaults(func=cmd_query)

    report = commands.add_parser(
        "report", help="write the dashboard: one self-contained HTML file, viewable offline"
    )
    report.add_argument("--out", help="where to write it (default: report.html beside the warehouse)")
    report.add_argument("--app", help="only this app (full resource name or app id)")
    report.add_argument("--since", type=_day, help="first UTC day included")
    report.add_argument("--until", type=_day, help="first UTC day excluded")
    report.set_defaults(func=cmd_report)

    simulate = commands.add_parser("simulate", help="serve the local CES MCP simulator")
    simulate.add_argument("--host", default="127.0.0.1")
    simulate.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    _add_scale_options(simulate)
    simulate.set_defaults(func=cmd_simulate)

    demo = commands.add_parser("demo", help="simulator → ingest → row counts and a trend table")
    _add_scale_options(demo)
    demo.set_defaults(func=cmd_demo)

    dev = commands.add_parser("dev", help="the simulator and the Dagster UI together, on the demo's data")
    dev.add_argument("--ui-port", type=int, default=3000, help="port of the Dagster UI")
    _add_scale_options(dev)
    dev.set_defaults(func=cmd_dev)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a user error is one line on stderr and a non-zero exit, never a traceback."""
    from pipelines.ces.errors import CesError
    from pipelines.warehouse.duck import WarehouseSchemaError
    from pipelines.warehouse.lock import WarehouseBusyError

    load_dotenv_file()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args, Settings.from_env())
    except ConfigError as exc:
        console.print(f"[red]configuration error: {escape(str(exc))}", soft_wrap=True)
        return 2
    except UserError as exc:
        console.print(f"[red]error: {escape(str(exc))}", soft_wrap=True)
        return 2
    except (CesError, WarehouseBusyError, WarehouseSchemaError) as exc:
        console.print(f"[red]error: {escape(str(exc))}", soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        console.print("[yellow]interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
