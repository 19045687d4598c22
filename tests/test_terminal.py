"""What a person reads in the terminal: tables that fit or turn vertical, row counts, whole
lines when piped, a description for every command and option."""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trend_samples as samples

from pipelines.cli import build_parser
from pipelines.cli.common import TERMINAL_ROWS, out, print_rows


def test_an_empty_result_says_0_rows_and_names_its_columns(capsys: pytest.CaptureFixture[str]) -> None:
    print_rows(["day", "conversations"], [], "table")
    assert capsys.readouterr().out == "0 rows (day, conversations)\n"


def test_a_table_that_fits_is_boxed_with_its_row_count(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [("2026-11-01", 3, None), ("2026-11-02", 12, "日本語"), ("2026-11-03", 1, "two\nlines")]
    print_rows(["day", "n", "note"], rows, "table")
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "┃ day        ┃ n  ┃ note   ┃"
    assert lines[3:7] == [
        "│ 2026-11-01 │ 3  │        │",
        "│ 2026-11-02 │ 12 │ 日本語 │",  # a CJK character takes two cells
        "│ 2026-11-03 │ 1  │ two    │",
        "│            │    │ lines  │",
    ]
    assert lines[7].startswith("└") and lines[-1] == "3 rows"


def test_a_table_too_wide_for_the_terminal_shows_each_row_as_lines(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(out, "width", 80)
    columns = [f"column_{i}" for i in range(16)]
    print_rows(columns, [tuple(f"value {i}-{row}" for i in range(16)) for row in range(2)], "table")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("-[ row 1 ]-") and lines[17].startswith("-[ row 2 ]-")
    assert lines[1] == "column_0   value 0-0" and lines[16] == "column_15  value 15-0"
    assert max(len(line) for line in lines) <= 80 and lines[-1] == "2 rows"


def test_a_limited_table_shows_its_first_and_last_rows_and_how_many_it_left_out(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [(f"2026-11-{day:02d}", day) for day in range(1, 11)]
    print_rows(["day", "n"], rows, "table", limit=4)
    print_rows(["day", "n"], rows[:4], "table", limit=4)  # as many as the limit: every one
    lines = capsys.readouterr().out.splitlines()
    assert lines[3:8] == [
        "│ 2026-11-01 │ 1  │",
        "│ 2026-11-02 │ 2  │",
        "│ ⋮          │ ⋮  │",
        "│ 2026-11-09 │ 9  │",
        "│ 2026-11-10 │ 10 │",
    ]
    assert lines[9] == "10 rows (4 shown: the first 2 and the last 2; --format csv for all)"
    assert len(lines) == 10 + 9 and lines[-1] == "4 rows"

    monkeypatch.setattr(out, "width", 10)  # each row as lines
    print_rows(["day", "n"], rows, "table", limit=3)
    blocks = [line for line in capsys.readouterr().out.splitlines() if not line.startswith(("day", "n "))]
    assert [line.split(" ]")[0] for line in blocks[:-1]] == ["-[ row 1", "-[ row 2", "⋮", "-[ row 10"]
    assert blocks[-1] == "10 rows (3 shown: the first 2 and the last 1; --format csv for all)"


def test_query_on_a_terminal_shows_a_screenful_and_piped_every_row(tmp_path: Path) -> None:
    """`span_latency` answers 44 rows of the sample warehouse."""
    warehouse = samples.build_warehouse(tmp_path)[1]
    env = {**os.environ, "CES_WAREHOUSE": warehouse.path, "COLUMNS": "200"}
    command = [sys.executable, "-m", "pipelines.cli", "query", "span_latency", "--param", "since=2026-01-01"]
    leader, follower = pty.openpty()
    with subprocess.Popen(command, stdout=follower, stderr=subprocess.PIPE, env=env, cwd=tmp_path) as shown:
        os.close(follower)
        said = b""
        while chunk := _read(leader):
            said += chunk
        assert shown.wait(timeout=60) == 0, shown.stderr.read() if shown.stderr else ""
    os.close(leader)
    lines = said.decode().replace("\r\n", "\n").splitlines()
    assert lines[-1] == f"44 rows ({TERMINAL_ROWS} shown: the first 20 and the last 20; --format csv for all)"
    assert sum(line.startswith("│ ") for line in lines) == TERMINAL_ROWS + 1  # and the ⋮ row
    piped = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    assert piped.stdout.splitlines()[-1] == "44 rows"
    assert sum(line.startswith("│ ") for line in piped.stdout.splitlines()) == 44


def _read(leader: int) -> bytes:
    """What the program wrote to its terminal since the last read; b"" once it closed it."""
    try:
        return os.read(leader, 65536)
    except OSError:  # EIO: no process holds the terminal any more
        return b""


def _ces_pipeline(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pipelines.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)


def test_query_list_piped_gives_whole_lines_and_whole_summaries() -> None:
    lines = _ces_pipeline("query", "--list").stdout.splitlines()
    summaries = [line for line in lines if not line.startswith(" ")]
    assert all(re.fullmatch(r"[a-z_]+  \S.*\.", line) for line in summaries), summaries
    assert all(line.startswith("    --param ") for line in lines if line.startswith(" "))
    listed = json.loads(_ces_pipeline("query", "--list", "--format", "json").stdout)
    durations = next(query for query in listed if query["name"] == "evaluation_run_durations")
    assert durations["description"].endswith("oldest run first: the run duration trend per app.")
    assert {p["name"] for p in durations["parameters"]} >= {"app", "since"}


def test_every_command_has_a_description_and_every_option_a_help_text() -> None:
    parser = build_parser()
    (commands,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    for name, command in commands.choices.items():
        assert command.description, name
        assert [action.dest for action in command._actions if not action.help] == [], name
