"""What every command shares: the consoles, argument types, user errors and row output."""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta

from rich.console import Console
from rich.table import Table

from pipelines.errors import UsageError

console = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 160)
"""Tables go to stdout; piped output gets a wide fixed width rather than 80 columns."""


def parse_day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, got {value!r}") from None


def parse_instant(value: str) -> datetime:
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO date-time such as 2026-11-03T09:00, got {value!r}"
        ) from None
    return instant if instant.tzinfo else instant.replace(tzinfo=UTC)


def days_between(since: date, until: date) -> list[date]:
    if until <= since:
        raise UserError(f"--until ({until}) must be after --since ({since})")
    return [since + timedelta(days=i) for i in range((until - since).days)]


def serve_until_stopped(serve: Callable[[], None], what: str) -> int:
    """Run a server until Ctrl-C or SIGTERM, the usual way to end one: exit 0, one line. A server
    that shuts down gracefully on the signal itself (uvicorn) may return instead of raising."""
    with contextlib.suppress(KeyboardInterrupt):
        serve()
    console.print(f"{what} stopped")
    return 0


class UserError(UsageError):
    """Something the user asked for cannot be done as asked: one line, exit code 2."""


def print_rows(columns: Sequence[str], rows: Sequence[Sequence[object]], fmt: str) -> None:
    if fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    elif fmt == "json":
        from pipelines.warehouse.queries import json_row

        print(json.dumps([json_row(columns, row) for row in rows], indent=2))
    else:
        table = Table(*columns)
        for row in rows:
            table.add_row(*("" if value is None else str(value) for value in row))
        out.print(table)
