"""What every command shares: the consoles, argument types, user errors and row output."""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Literal

from rich.cells import cell_len
from rich.console import Console

from pipelines.config import StorageSettings
from pipelines.errors import UsageError

console = Console(stderr=True)
console.soft_wrap = not console.is_terminal
"""Messages go to stderr; in a log file each stays on one line, whole for grep."""
out = Console(width=None if sys.stdout.isatty() else 160)
"""Tables go to stdout; piped output gets a wide fixed width rather than 80 columns."""


def parse_day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, got {value!r}") from None


def parse_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {value!r}")
    return seconds


def parse_port(value: str) -> int:
    port = int(value) if value.isdigit() else -1
    if not 0 <= port <= 65_535:
        raise argparse.ArgumentTypeError(
            f"expected a port number from 0 (a free one) to 65535, got {value!r}"
        )
    return port


def parse_days(value: str) -> int:
    if not (value.isdigit() and int(value) > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number of days, got {value!r}")
    return int(value)


def parse_instant(value: str) -> datetime | Literal["now"]:
    """An ISO date-time (UTC unless it says), or `now`: the wall clock whenever it is read."""
    if value == "now":
        return "now"
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO date-time such as 2026-11-03T09:00, got {value!r}"
        ) from None
    return instant if instant.tzinfo else instant.replace(tzinfo=UTC)


def counted(count: int, noun: str) -> str:
    """`1 run`, `2 runs`: a count with its noun, plural unless one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def days_between(since: date, until: date) -> list[date]:
    if until <= since:
        raise UsageError(f"--until ({until}) must be after --since ({since})")
    return [since + timedelta(days=i) for i in range((until - since).days)]


def check_writable(storage: StorageSettings) -> None:
    """Every folder on this machine that runs write in can be made and written: a path setting
    that cannot (a file where a folder goes, no permission) fails the command in one line before
    any run, rather than every run once it has fetched its pages."""
    from pipelines.warehouse.ducklake import catalog_file, is_ducklake

    places = [("CES_LAKE", storage.lake, storage.lake)]
    if not is_ducklake(storage.warehouse):
        places.append(("CES_WAREHOUSE", storage.warehouse, str(Path(storage.warehouse).parent)))
    elif file := catalog_file(storage.warehouse):
        places.append(("CES_WAREHOUSE", storage.warehouse, str(Path(file).parent)))
    if storage.warehouse_data_path:
        places.append(("CES_WAREHOUSE_DATA_PATH", storage.warehouse_data_path, storage.warehouse_data_path))
    for setting, value, folder in places:
        if "://" in folder:  # object storage: its client says what it refuses
            continue
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            raise UsageError(f"{setting}={value} cannot be written: {_why_not(Path(folder), exc)}") from None


def _why_not(folder: Path, error: OSError) -> str:
    """A file in the way named as such (the OS says only "Not a directory" or "File exists")."""
    found = next((path for path in (folder, *folder.parents) if path.exists()), None)
    if found is not None and not found.is_dir():
        return f"{found} is a file, not a folder"
    return f"{error.strerror} ({error.filename or folder})"


def said_once(seen: dict[str, str], label: str, error: object) -> str:
    """`label: error`, or, where an earlier run (`seen`: each error's first run) failed with the
    same error, `label` and that run: every app's runs failing for one reason (a bad setting, a
    server down) say it once."""
    first = seen.setdefault(str(error), label)
    return f"{label}: {error}" if first == label else f"{label}: the same error as {first}"


def serve_until_stopped(serve: Callable[[], None], what: str) -> int:
    """Run a server until Ctrl-C or SIGTERM, the usual way to end one: exit 0, one line. A server
    that shuts down gracefully on the signal itself (uvicorn) may return instead of raising."""
    with contextlib.suppress(KeyboardInterrupt):
        serve()
    console.print(f"{what} stopped")
    return 0


TERMINAL_ROWS = 40
"""The rows of a table a terminal shows at most: the first and the last 20, as the DuckDB shell
does; a pipe, csv and json get every row."""


def print_rows(
    columns: Sequence[str], rows: Sequence[Sequence[object]], fmt: str, *, limit: int | None = None
) -> None:
    """Rows as csv, json (an array, a row per line), or a table for a person: boxed when it fits
    the terminal, one block per row (`column  value` lines) when it would not, and always how many
    rows there are; `limit`: a table of more rows shows that many, the first and the last half,
    with a `⋮` where the others would be."""
    if fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
        return
    if fmt == "json":
        from pipelines.warehouse.queries import json_lines

        # An array with a row per line: as readable as an indented one, at the encoder's speed.
        lines = json_lines(columns, rows).decode().rstrip("\n").replace("\n", ",\n")
        print(f"[\n{lines}\n]" if rows else "[]")
        return
    kept = len(rows) if limit is None else min(limit, len(rows))
    head = kept - kept // 2 if kept < len(rows) else kept
    numbers = [*range(1, head + 1), *range(len(rows) - (kept - head) + 1, len(rows) + 1)]
    texts = [["" if value is None else str(value) for value in rows[number - 1]] for number in numbers]
    widths = _widths(columns, texts)
    if rows and sum(widths) + 3 * len(columns) + 1 > out.width:
        _print_vertical(columns, texts, numbers)
    elif rows:
        _print_boxed(columns, texts, widths, gap=head if kept < len(rows) else None)
    count = f"{len(rows):,} row{'' if len(rows) == 1 else 's'}"
    if kept < len(rows):
        count += f" ({kept} shown: the first {head} and the last {kept - head}; --format csv for all)"
    print(f"{count} ({', '.join(columns)})" if not rows else count)


def _widths(columns: Sequence[str], texts: Sequence[Sequence[str]]) -> list[int]:
    """Each column's widest line in terminal cells (a CJK character takes two), its name included."""
    values = zip(*texts, strict=True) if texts else ([] for _ in columns)
    widths = []
    for column, cells in zip(columns, values, strict=True):
        text = "\n".join([column, *cells])
        widths.append(max(map(len if text.isascii() else _cells, text.split("\n"))))
    return widths


def _print_boxed(
    columns: Sequence[str], texts: Sequence[Sequence[str]], widths: Sequence[int], gap: int | None = None
) -> None:
    """The table in the box rich draws, written directly: rich lays out every cell in Python
    (3.5 s for 1,741 rows of 7 columns), this 30 ms, and 0.2 s for 42,000 rows of 8; a row of
    `⋮` before row `gap` (of `texts`), where rows were left out."""

    def rule(left: str, line: str, middle: str, right: str) -> str:
        return left + middle.join(line * (width + 2) for width in widths) + right

    def lines(cells: Sequence[str], bar: str) -> list[str]:
        split = [cell.split("\n") for cell in cells]
        depth = max(map(len, split))
        return [
            f"{bar} "
            + f" {bar} ".join(
                _padded(parts[line] if line < len(parts) else "", width)
                for parts, width in zip(split, widths, strict=True)
            )
            + f" {bar}"
            for line in range(depth)
        ]

    shown = [rule("┏", "━", "┳", "┓"), *lines(columns, "┃"), rule("┡", "━", "╇", "┩")]
    for position, row in enumerate(texts):
        if position == gap:
            shown.extend(lines(["⋮"] * len(columns), "│"))
        joined = "".join(row)
        if joined.isascii() and "\n" not in joined:  # most rows: one line, a character a cell
            shown.append("│ " + " │ ".join(map(str.ljust, row, widths)) + " │")
        else:
            shown.extend(lines(row, "│"))
    shown.append(rule("└", "─", "┴", "┘"))
    sys.stdout.write("\n".join(shown) + "\n")


def _cells(text: str) -> int:
    """Terminal cells `text` takes (a CJK character two); plain ASCII is its length."""
    return len(text) if text.isascii() else cell_len(text)


def _padded(text: str, width: int) -> str:
    return text + " " * (width - _cells(text))


def _print_vertical(columns: Sequence[str], texts: Sequence[Sequence[str]], numbers: Sequence[int]) -> None:
    """One block per row, a `column  value` line per column, for rows too wide for a table;
    `numbers`: each row's, a `⋮` line where they skip."""
    label = max(map(len, columns))
    lines = []
    for previous, number, row in zip([0, *numbers], numbers, texts, strict=False):
        if number != previous + 1:
            lines.append("⋮")
        lines.append(f"-[ row {number} ]" + "-" * max(0, min(out.width, 60) - 12 - len(str(number))))
        lines.extend(f"{column.ljust(label)}  {text}" for column, text in zip(columns, row, strict=True))
    sys.stdout.write("\n".join(lines) + "\n")
