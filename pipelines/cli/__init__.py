"""`ces-pipeline`: CES conversations and evaluation runs into an analytics warehouse, and its
answers: to SQL, a dashboard, a trace view and agents (MCP)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from rich.markup import escape

from pipelines import __version__, stop
from pipelines.cli.common import console, parse_day, parse_days, parse_port, parse_seconds
from pipelines.cli.evaluate import cmd_evaluate
from pipelines.cli.loads import cmd_ingest, cmd_rebuild
from pipelines.cli.local import add_scale_options, cmd_demo, cmd_dev, cmd_simulate
from pipelines.cli.maintain import cmd_maintain
from pipelines.cli.reads import cmd_mcp, cmd_query, cmd_report
from pipelines.cli.trace import cmd_trace
from pipelines.config import ConfigError, Settings, load_dotenv_file, unknown_variables
from pipelines.errors import ActionableError


def _add_partition_options(parser: argparse.ArgumentParser, *, since: str, until: str, apps: str) -> None:
    """`--since`, `--until` and `--app`, each with what it covers when left out."""
    parser.add_argument("--since", type=parse_day, help=f"first UTC day, YYYY-MM-DD (default: {since})")
    parser.add_argument(
        "--until", type=parse_day, help=f"the UTC day after the last (exclusive; default: {until})"
    )
    parser.add_argument("--skip-evaluations", action="store_true", help="conversations only")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="say only what went wrong (failed runs, warnings, rejects), no progress: for cron, which "
        "mails what a command prints",
    )
    parser.add_argument("--app", action="append", help=f"only this app (repeatable); default: {apps}")


def _command(commands: argparse._SubParsersAction, name: str, summary: str) -> argparse.ArgumentParser:
    """A subcommand whose summary shows in `ces-pipeline --help` and atop its own `--help`."""
    return commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")


class _Version(argparse.Action):
    """`--version`: this version, and the DuckDB and Dagster it runs with (what a bug report
    wants), looked up only when asked: every command parses its options."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the versions and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import version

        print(f"ces-pipeline {__version__} (DuckDB {version('duckdb')}, Dagster {version('dagster')})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ces-pipeline", description=__doc__)
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = _command(commands, "ingest", "ingest conversations started in [since, until) (UTC)")
    _add_partition_options(
        ingest,
        since="CES_LOOKBACK_DAYS before today (UTC), and the days an app is behind after an outage or "
        "a failed load (up to 31 days back): the hourly schedule's days",
        until="the day after today (UTC)",
        apps="every app of CES_APPS",
    )
    ingest.set_defaults(func=cmd_ingest, until=datetime.now(UTC).date() + timedelta(days=1))

    evaluate = _command(commands, "evaluate", "start an evaluation run, wait for it to start, load it")
    evaluate.add_argument(
        "--app", required=True, help="the app: its id (of CES_APPS) or projects/{p}/locations/{l}/apps/{a}"
    )
    evaluate.add_argument("--evaluations", help="comma-separated evaluation ids or names")
    evaluate.add_argument("--dataset", help="evaluation dataset id or name")
    evaluate.add_argument(
        "--app-version", help="the app version to evaluate (id or name); default: the app as it is now"
    )
    evaluate.add_argument("--display-name", help="the run's name in the CES console")
    evaluate.add_argument(
        "--poll-seconds", type=parse_seconds, default=2.0, help="seconds between polls of the run (default 2)"
    )
    evaluate.add_argument(
        "--gate",
        action="store_true",
        help="wait for the run to finish, load it, and exit 3 if it regressed against the previous "
        "completed run of the same evaluations (CES_REGRESSION_* thresholds)",
    )
    evaluate.set_defaults(func=cmd_evaluate)

    rebuild = _command(commands, "rebuild", "re-derive Parquet and warehouse from the raw lake (no API)")
    _add_partition_options(
        rebuild,
        since="the first day in the raw lake",
        until="after the last day in the raw lake",
        apps="every app in the raw lake",
    )
    rebuild.set_defaults(func=cmd_rebuild)

    maintain = _command(
        commands,
        "maintain",
        "the daily upkeep, where no Dagster daemon runs it: old runs' records pruned, a DuckLake maintained",
    )
    maintain.add_argument(
        "--examine-days",
        type=parse_days,
        metavar="DAYS",
        default=7,
        help="the days of runs looked at, from CES_RUN_RETENTION_DAYS back (default 7: a week of missed "
        "days; once, larger, to prune an instance that kept every run)",
    )
    maintain.add_argument("--quiet", action="store_true", help="say only what went wrong: for cron")
    maintain.set_defaults(func=cmd_maintain)

    query = _command(commands, "query", "run a named query from sql/queries/")
    query.add_argument("name", nargs="?", help="the query's name (--list shows them)")
    query.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="table (the default: vertical when too wide, 40 rows at most on a terminal), csv or json",
    )
    query.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of the query (repeatable; --list shows each query's)",
    )
    query.add_argument("--list", action="store_true", help="list the named queries and their parameters")
    query.set_defaults(func=cmd_query)

    report = _command(
        commands, "report", "write the dashboard: one self-contained HTML file, viewable offline"
    )
    report.add_argument("--out", help="where to write it (default: report.html beside the warehouse)")
    report.add_argument("--app", help="only this app (full resource name or app id)")
    report.add_argument(
        "--since", type=parse_day, help="first UTC day included (default: 30 days up to the newest loaded)"
    )
    report.add_argument("--until", type=parse_day, help="first UTC day excluded")
    report.set_defaults(func=cmd_report)

    trace = _command(
        commands,
        "trace",
        "print a conversation's turns and span trees, each span a bar on its turn's timeline",
    )
    trace.add_argument("conversation", help="the conversation's full resource name or id")
    trace.set_defaults(func=cmd_trace)

    mcp = _command(commands, "mcp", "serve the warehouse to agents as read-only MCP tools (stdio, or --http)")
    mcp.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="with --http: the address to listen on")
    mcp.add_argument("--port", type=parse_port, default=8766, help="with --http: 0 picks a free port")
    mcp.set_defaults(func=cmd_mcp)

    simulate = _command(commands, "simulate", "serve the local CES MCP simulator")
    simulate.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    simulate.add_argument("--port", type=parse_port, default=8765, help="0 picks a free port")
    add_scale_options(simulate)
    simulate.set_defaults(func=cmd_simulate)

    demo = _command(commands, "demo", "simulator → ingest → row counts and a trend table")
    add_scale_options(demo)
    demo.set_defaults(func=cmd_demo)

    dev = _command(commands, "dev", "the simulator and the Dagster UI together, on the demo's data")
    dev.add_argument("--ui-port", type=parse_port, default=3000, help="port of the Dagster UI")
    add_scale_options(dev)
    dev.set_defaults(func=cmd_dev)
    return parser


def _interrupt(_signo: int, _frame: object) -> None:
    """Ctrl-C: a stop, recorded before the KeyboardInterrupt is raised. DuckDB, whose check for
    signals runs this handler during a query, turns the KeyboardInterrupt into an error of its own
    (`RuntimeError: Query interrupted`), which `main` knows for a stop by the record alone: the
    thread reading the signals' wakeup bytes may not have run yet."""
    stop.requested.set()
    raise KeyboardInterrupt


def _terminate(_signo: int, _frame: object) -> None:
    """SIGTERM or SIGHUP: a stop, then Ctrl-C's path. The stop is recorded here too, not only by
    the thread reading the signals' wakeup bytes: an event loop that a library runs may take the
    wakeup fd."""
    stop.requested.set()
    signal.raise_signal(signal.SIGINT)


class _LibraryWarning(logging.Handler):
    """A warning logged where nothing handles it (an object store's client giving up its retries,
    say), as one line, once a command (each of its runs would repeat it): the command's own
    message then says what failed. It says its level, and a library's line names its logger. Python's
    default (`logging.lastResort`) prints the record's whole traceback, every time. A record of an
    interruption is left out: the command's own line says it was interrupted (SQLAlchemy logs an
    error when Ctrl-C lands as it closes a connection, then raises the KeyboardInterrupt on)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and not isinstance(record.exc_info[1], Exception | None):
            return  # a stop (Ctrl-C's KeyboardInterrupt, Dagster's own) interrupted what it logs
        source = "" if record.name.split(".")[0] == "pipelines" else f" ({record.name})"
        line = f"{record.levelname.lower()}{source}: {record.getMessage()}"
        if line not in self.said:
            self.said.add(line)
            sys.stderr.write(f"{line}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a user error is one line on stderr and a non-zero exit, never a traceback."""
    logging.lastResort = _LibraryWarning()
    load_dotenv_file()
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # the commands, where argparse alone would say only that one is required
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    # SIGTERM (a scheduler, `kill`, a container stopping) ends a command as Ctrl-C does: the
    # run in progress is interrupted and recorded, the runs not started are not started. A shell
    # starts background jobs with SIGINT ignored, which would make both signals do nothing, here
    # and in every process started from here (`dagster dev` and its servers): it is handled anyway.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _terminate)
    # A closed terminal (SIGHUP) too, unless `nohup` asked that it not: `dagster dev`, which
    # `ces-pipeline dev` starts in a process group of its own, is ended on the way out.
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        signal.signal(signal.SIGHUP, _terminate)
    stop.watch_signals()  # a DuckDB query in progress is interrupted too
    with stop.ended_within(stop.STOP_GRACE_SECONDS):  # even in a call no stop reaches
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The command `args` name, its errors each a line and an exit code."""
    try:
        settings = Settings.from_env()
        for unknown in unknown_variables():
            console.print(f"[yellow]warning: {escape(unknown)}", soft_wrap=True)
        return args.func(args, settings)
    except ConfigError as exc:
        console.print(f"[red]configuration error: {escape(str(exc))}", soft_wrap=True)
        return 2
    except ActionableError as exc:
        console.print(f"[red]error: {escape(str(exc))}", soft_wrap=True)
        return exc.exit_code
    except BrokenPipeError:  # the reader left (`| head`): the rest has nowhere to go
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt as exc:  # a message says what became of the runs, if any had begun
        console.print(f"[yellow]{escape(str(exc) or 'interrupted')}", soft_wrap=True)
        return 130
    except Exception:
        if not stop.requested.is_set():
            raise
        # A query the stop interrupted (a report's, say) ends with DuckDB's own error: a stop too.
        console.print("[yellow]interrupted", soft_wrap=True)
        return 130
