"""What a person reads in the terminal: tables that fit or turn vertical, row counts, whole
lines when piped, a description for every command and option."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import pytest

from pipelines.cli import build_parser
from pipelines.cli.common import out, print_rows


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
