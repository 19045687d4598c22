"""`ces-pipeline`: ingest, rebuild, query, report, simulate and demo from the command line."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pipelines.config import (
    CesSettings,
    ConfigError,
    ces_settings_from_env,
    load_dotenv_file,
    storage_settings_from_env,
)

if TYPE_CHECKING:
    from pipelines.lake.store import Lake

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
        raise SystemExit(f"error: --until ({until}) must be after --since ({since})")
    return [since + timedelta(days=i) for i in range((until - since).days)]


# -- ingest / rebuild ---------------------------------------------------------------------------


_JOBS = {"ingest": ("ingest_conversations", "ingested"), "rebuild": ("rebuild_conversations", "rebuilt")}


def _partition_progress(*, auto_refresh: bool = True) -> Progress:
    """A bar over partitions with a line of counts (the task's `detail` field)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        auto_refresh=auto_refresh,
    )


def _run_partitions(command: str, partitions: list[tuple[str, date]], parallel: int) -> int:
    """Run the command's partitioned job for every (app, day) with a live progress display."""
    job_name, verb = _JOBS[command]
    from pipelines.definitions import build_definitions
    from pipelines.orchestration.run import PartitionOutcome, instance_with_pools, run_partitions

    definitions = build_definitions()
    instance = instance_with_pools()
    totals = {"conversations": 0, "pages": 0, "requests": 0, "rejects": 0}
    failures: list[PartitionOutcome] = []
    warnings: Counter[str] = Counter()
    started = time.monotonic()
    with _partition_progress() as progress:
        task = progress.add_task(f"{verb} partitions", total=len(partitions), detail="")

        def on_outcome(outcome: PartitionOutcome) -> None:
            totals["conversations"] += outcome.value("warehouse/conversations", "dagster/row_count")
            totals["pages"] += outcome.value("raw/conversation_pages", "pages")
            totals["requests"] += outcome.value("raw/conversation_pages", "requests")
            totals["rejects"] += outcome.value("warehouse/rejects", "dagster/row_count")
            if not outcome.success:
                failures.append(outcome)
                progress.console.print(f"[red]✗ {outcome.label}: {escape(str(outcome.error))}")
            for check in outcome.failed_checks:
                if "(WARN)" in check:
                    warnings[check.removesuffix(" (WARN)")] += 1
                else:
                    progress.console.print(f"[red]check failed for {outcome.label}: {escape(check)}")
            rate = totals["conversations"] / max(time.monotonic() - started, 1e-9)
            progress.update(
                task,
                advance=1,
                detail=(
                    f"{totals['pages']} pages · {totals['requests']} requests · "
                    f"{totals['conversations']} conversations · {rate:.0f}/s"
                ),
            )

        run_partitions(
            definitions, job_name, partitions, instance=instance, parallel=parallel, on_outcome=on_outcome
        )
    if totals["rejects"]:
        console.print(f"[yellow]{totals['rejects']} objects rejected: see the rejects table.")
    for check, count in sorted(warnings.items()):
        console.print(f"[yellow]warning: {escape(check)} on {count} of {len(partitions)} partitions.")
    if failures:
        console.print(f"[red]{len(failures)} of {len(partitions)} partitions failed.")
        _print_retries(command, [(failure.app, failure.day) for failure in failures])
        return 1
    console.print(
        f"[green]{verb} {len(partitions)} partitions: {totals['conversations']} conversations loaded."
    )
    return 0


def _bulk(
    command: str,
    lake: Lake,
    partitions: list[tuple[str, date]],
    workers: int,
    task_args: Sequence[object] = (),
) -> int:
    """Ingest or rebuild without a Dagster run per partition: each partition's task (fetch and
    flatten, or flatten) in `workers` processes, loads in commit windows
    (pipelines.ingest.backfill), then the partition checks on what was loaded."""
    from pipelines.ingest.backfill import backfill_partitions, flatten_task
    from pipelines.ingest.stream import ingest_task
    from pipelines.orchestration.checks import WARNING_CHECKS, conversation_check_results
    from pipelines.warehouse.duck import Warehouse

    verb = _JOBS[command][1]
    warehouse = Warehouse(storage_settings_from_env().warehouse)
    started = time.monotonic()
    # Refreshed by hand rather than by rich's thread: with no other thread running, the
    # workers are forked from this process and share its memory (see backfill.worker_context).
    with _partition_progress(auto_refresh=False) as progress:
        task = progress.add_task(f"{verb} partitions", total=len(partitions), detail="")
        loaded = {"conversations": 0}

        def on_loaded(group: list[tuple[str, date]], inserted: dict[str, int]) -> None:
            loaded["conversations"] += inserted.get("conversations", 0)
            rate = loaded["conversations"] / max(time.monotonic() - started, 1e-9)
            progress.update(
                task, advance=len(group), detail=f"{loaded['conversations']} conversations · {rate:.0f}/s"
            )
            progress.refresh()

        result = backfill_partitions(
            lake,
            warehouse,
            partitions,
            workers=max(1, workers),
            task=ingest_task if command == "ingest" else flatten_task,
            task_args=task_args,
            on_loaded=on_loaded,
        )
    failed: list[str] = []
    warnings: Counter[str] = Counter()
    with console.status("checking the partitions loaded"), warehouse.connect() as conn:
        for app, day in result.partitions:
            for check in conversation_check_results(conn, app, day):
                label = f"{check.asset_key.to_user_string()} {check.check_name}"
                if check.passed:
                    continue
                if check.check_name in WARNING_CHECKS:
                    warnings[label] += 1
                else:
                    failed.append(f"{app} {day}: {label} {check.metadata.get('failures')}")
    if result.loaded.get("rejects"):
        console.print(f"[yellow]{result.loaded['rejects']} objects rejected: see the rejects table.")
    for check, count in sorted(warnings.items()):
        console.print(f"[yellow]warning: {escape(check)} on {count} of {len(partitions)} partitions.")
    for failure in failed:
        console.print(f"[red]check failed: {escape(failure)}")
    console.print(
        f"[green]{verb} {len(result.partitions)} partitions in {result.commits} "
        f"transaction{'s' if result.commits != 1 else ''}: "
        f"{result.loaded.get('conversations', 0)} conversations loaded."
    )
    if result.failed:
        console.print(f"[red]{len(result.failed)} of {len(partitions)} partitions failed:")
        failed_partitions = sorted(result.failed, key=lambda partition: (partition[1], partition[0]))
        for app, day in failed_partitions:
            console.print(f"[red]✗ {escape(app)} {day}: {escape(result.failed[app, day])}")
        _print_retries(command, failed_partitions, "--bulk")
    return 1 if failed or result.failed else 0


def _print_retries(command: str, partitions: Sequence[tuple[str, date]], *options: str) -> None:
    """The command that retries each failed partition alone (re-running is idempotent)."""
    console.print("Retry one alone with:")
    for app, day in partitions:
        window = f"--since {day} --until {day + timedelta(days=1)}"
        console.print(" ".join(("  ces-pipeline", command, window, "--app", app, *options)), soft_wrap=True)


def _ingest_evaluation_runs(apps: Sequence[str], run_config: dict | None = None) -> int:
    """Run the evaluation run job for each app and report what it loaded."""
    from pipelines.definitions import build_definitions
    from pipelines.orchestration.run import instance_with_pools, run_app_job

    with console.status("fetching evaluation runs"):
        outcomes = run_app_job(
            build_definitions(),
            "ingest_evaluation_runs",
            apps,
            instance=instance_with_pools(),
            run_config=run_config,
        )
    failed = [outcome for outcome in outcomes if not outcome.success]
    for outcome in failed:
        console.print(f"[red]✗ evaluation runs of {outcome.app}: {outcome.error}")
    runs = sum(outcome.value("warehouse/evaluation_runs", "dagster/row_count") for outcome in outcomes)
    results = sum(outcome.value("warehouse/evaluation_results", "dagster/row_count") for outcome in outcomes)
    console.print(
        f"[green]evaluation runs: {runs} loaded, {results} results, from {len(outcomes) - len(failed)} apps."
    )
    return 1 if failed else 0


def _bulk_ingest(settings: CesSettings, partitions: list[tuple[str, date]], workers: int) -> int:
    """`_bulk` ingest: every worker has a client of its own, and they share one request rate
    through a file (`CES_RATE_LIMIT_FILE` or the one in `DAGSTER_HOME`, else one for this
    ingest alone)."""
    from pipelines.lake.store import Lake

    lake = Lake(storage_settings_from_env().lake)
    if settings.rate_limit_file:
        return _bulk("ingest", lake, partitions, workers, (settings,))
    with tempfile.TemporaryDirectory(prefix="ces-pipeline-") as scratch:
        shared = dataclasses.replace(settings, rate_limit_file=os.path.join(scratch, "rate-limit.state"))
        return _bulk("ingest", lake, partitions, workers, (shared,))


def cmd_ingest(args: argparse.Namespace) -> int:
    settings = ces_settings_from_env()
    apps = args.app or list(settings.apps)
    if not apps:
        console.print("[red]error: CES_APPS is not set. Name the apps to ingest, e.g.")
        console.print("  export CES_APPS=projects/my-project/locations/us/apps/my-app")
        return 2
    CesSettings(apps=tuple(apps))  # validates --app values like CES_APPS
    partitions = [(app, day) for day in _days(args.since, args.until) for app in apps]
    if args.bulk:
        conversations = _bulk_ingest(settings, partitions, args.parallel)
    else:
        conversations = _run_partitions("ingest", partitions, args.parallel)
    evaluations = 0 if args.skip_evaluations else _ingest_evaluation_runs(apps)
    return max(conversations, evaluations)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from pipelines.ces.client import CesMcpClient
    from pipelines.ingest.trigger import EvaluationTriggerError, start_evaluation
    from pipelines.lake.store import Lake

    evaluations = [e.strip() for e in (args.evaluations or "").split(",") if e.strip()]
    if bool(evaluations) == bool(args.dataset):
        console.print("[red]error: give exactly one of --evaluations a,b or --dataset D")
        return 2
    settings = ces_settings_from_env()
    lake = Lake(storage_settings_from_env().lake)
    try:
        with (
            CesMcpClient(settings) as client,
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
        console.print(f"[red]error: {exc}")
        if exc.operation:
            console.print(f"Follow it up with get_operation {exc.operation}; do not re-run blindly.")
        return 1
    out.print(f"operation {started.operation}")
    out.print(f"evaluation run {started.evaluation_run}")
    config = {
        "ops": {"raw__evaluation_runs": {"config": {"names": [started.evaluation_run], "discover": False}}}
    }
    return _ingest_evaluation_runs([args.app], config)


def cmd_rebuild(args: argparse.Namespace) -> int:
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    days = set(_days(args.since, args.until))
    lake = Lake(storage_settings_from_env().lake)
    partitions = [
        (app, day)
        for app, day in lake.raw_partitions(CONVERSATIONS_DATASET)
        if day in days and (not args.app or app in args.app)
    ]
    code = 0
    if partitions and args.bulk:
        code = _bulk("rebuild", lake, partitions, args.parallel)
    elif partitions:
        code = _run_partitions("rebuild", partitions, args.parallel)
    else:
        console.print(f"[yellow]no raw conversation pages in {lake.root} for that window.")
    if not args.skip_evaluations:
        from pipelines.ingest.evaluations import rebuild_evaluations
        from pipelines.warehouse.duck import Warehouse

        with console.status("replaying evaluation run fetches"):
            replayed = rebuild_evaluations(lake, Warehouse(storage_settings_from_env().warehouse), args.app)
        console.print(f"[green]evaluation runs: {replayed} fetches replayed.")
    return code


# -- query ----------------------------------------------------------------------------------------


def cmd_query(args: argparse.Namespace) -> int:
    from pipelines.warehouse.queries import NamedQueryError, named_queries, parse_param_options, run_query

    try:
        if args.list or not args.name:
            for query in named_queries():
                out.print(f"[bold]{query.name}[/bold]  {escape(query.description)}")
                for parameter in query.parameters:
                    out.print(f"    --param {parameter.signature()}  {parameter.description}", markup=False)
            return 0
        params = parse_param_options(args.param)
        columns, rows = run_query(storage_settings_from_env().warehouse, args.name, params)
    except NamedQueryError as exc:
        console.print(f"[red]error: {escape(str(exc))}")
        return 2
    _print_rows(columns, rows, args.format)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from pipelines.report import ReportError, default_report_path, write_report

    warehouse = storage_settings_from_env().warehouse
    target = args.out or default_report_path(warehouse)
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


def cmd_simulate(args: argparse.Namespace) -> int:
    from pipelines.ces.simulator import serve

    if args.faults:
        console.print(f"injecting faults: {args.faults.spec.describe()}")
    serve(_simulator_config(args), host=args.host, port=args.port)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from pipelines.ces.simulator import running_simulator
    from pipelines.report import default_report_path, write_report
    from pipelines.warehouse.duck import Warehouse
    from pipelines.warehouse.queries import run_query

    config = _simulator_config(args)
    with running_simulator(config) as sim:
        os.environ["CES_MCP_URL"] = sim.url
        os.environ["CES_APPS"] = ",".join(sim.apps)
        os.environ.setdefault("CES_MAX_RPS", "200")  # a local server: no quota to respect
        console.print(f"Simulator at {sim.url} serving {len(sim.apps)} apps")
        first = config.scale.start_date
        window = _days(first, first + timedelta(days=config.scale.days))
        partitions = [(app, day) for day in window for app in sim.apps]
        code = max(_run_partitions("ingest", partitions, 2), _ingest_evaluation_runs(sim.apps))
    warehouse = storage_settings_from_env().warehouse
    counts = Warehouse(warehouse).row_counts()
    table = Table("table", "rows", title=f"Warehouse {warehouse}")
    for name, count in counts.items():
        table.add_row(name, str(count))
    out.print(table)
    columns, rows = run_query(warehouse, "daily_volume", {})
    out.print("[bold]Conversations per day (sql/queries/daily_volume.sql)")
    _print_rows(columns, rows, "table")
    report = write_report(warehouse, default_report_path(warehouse), {})
    out.print(f"Dashboard: {report.path} ({report.charts} charts, opens offline)", markup=False)
    return code


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


def _add_partition_options(parser: argparse.ArgumentParser, *, bulk_help: str) -> None:
    """The options `ingest` and `rebuild` share: the UTC days, the apps, how to run them."""
    parser.add_argument("--since", type=_day, required=True, help="first UTC day, YYYY-MM-DD")
    parser.add_argument("--until", type=_day, required=True, help="the UTC day after the last (exclusive)")
    parser.add_argument("--skip-evaluations", action="store_true", help="conversations only")
    parser.add_argument("--bulk", action="store_true", help=bulk_help)
    parser.add_argument(
        "--app", action="append", help="only this app (repeatable); default: every app of CES_APPS"
    )
    parser.add_argument(
        "--parallel",
        type=int,
        default=int(os.environ.get("CES_PARALLEL_PARTITIONS") or 2),
        help="partitions run at once in separate processes (default CES_PARALLEL_PARTITIONS or 2)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ces-pipeline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", help="ingest conversations started in [since, until) (UTC)")
    _add_partition_options(
        ingest,
        bulk_help="for long histories: no Dagster run per partition; partitions fetched and flattened "
        "in --parallel processes sharing the request rate, loaded several per transaction, then checked",
    )
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
    _add_partition_options(
        rebuild,
        bulk_help="for long histories: no Dagster run per partition; partitions flattened in --parallel "
        "processes and loaded several per transaction, then checked",
    )
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    load_dotenv_file()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as exc:
        console.print(f"[red]configuration error: {exc}")
        return 2
    except KeyboardInterrupt:
        console.print("[yellow]interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
