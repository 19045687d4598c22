"""`ces-pipeline trace`: a conversation's turns and span trees, with bars on each turn's timeline,
failed spans marked and tool calls with their arguments' size and outcome."""

from __future__ import annotations

import json
import re
from pathlib import Path

import trend_samples as samples
from rich.text import Text
from test_cli import cli

from pipelines.cli.trace import BAR_WIDTH, FILLED, trace_lines


def _env(root: Path) -> dict[str, str]:
    return {"CES_WAREHOUSE": str(root / "warehouse.duckdb"), "PATH": "/usr/bin:/bin"}


def _spans(span: dict) -> int:
    return 1 + sum(_spans(child) for child in span.get("childSpans", []))


def test_trace_prints_every_turn_span_and_tool_call_with_its_outcome(tmp_path: Path) -> None:
    samples.build_warehouse(tmp_path)
    item = next(
        item
        for _, item in samples.all_conversations()
        if any(
            "error" in chunk["toolResponse"]["response"]
            for turn in item["turns"]
            for message in turn["messages"]
            for chunk in message["chunks"]
            if "toolResponse" in chunk
        )
    )
    done = cli("trace", item["name"], env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(item["name"]) and f"{len(item['turns'])} turns" in lines[0]
    assert "in progress" not in lines[0] and re.search(r", [0-9.,]+ s, ", lines[0])  # ended: its duration
    assert [line.split()[1] for line in lines if line.startswith("turn ")] == [
        str(index) for index in range(len(item["turns"]))
    ]
    bars = [line for line in lines if re.search(rf"\|[ {FILLED}]{{{BAR_WIDTH}}}\|", line)]
    assert len(bars) == sum(_spans(turn["rootSpan"]) for turn in item["turns"])
    expected_tools = []
    for turn in item["turns"]:
        responses = {}
        for message in turn["messages"]:
            for chunk in message["chunks"]:
                if "toolResponse" in chunk:
                    responses[chunk["toolResponse"]["id"]] = "error" in chunk["toolResponse"]["response"]
        for message in turn["messages"]:
            for chunk in message["chunks"]:
                if "toolCall" in chunk:
                    call = chunk["toolCall"]
                    name = call.get("displayName") or call["toolsetTool"]["toolId"]
                    size = len(json.dumps(call["args"], separators=(",", ":")))
                    outcome = "error" if responses[call["id"]] else "ok"
                    expected_tools.append(f"  tool {name}  args {size:,} B  → {outcome}")
    assert [line for line in lines if line.startswith("  tool ")] == expected_tools
    assert "error" in {line.rsplit(" ", 1)[-1] for line in expected_tools}


def test_an_unknown_conversation_is_a_clear_error(tmp_path: Path) -> None:
    samples.build_warehouse(tmp_path)
    done = cli("trace", "no-such-conversation", env=_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "no conversation 'no-such-conversation'" in done.stderr


def _span(name: str, start: str, seconds: float, children: list | None = None, **attributes: object) -> dict:
    return {
        "name": name,
        "start_time": start,
        "duration_seconds": seconds,
        "attributes": attributes,
        "children": children or [],
    }


def test_each_bar_sits_on_its_turns_timeline_and_failed_spans_are_marked() -> None:
    tool = _span("Tool", "2026-11-01 10:00:02+00:00", 1.0, **{"http status": 503})
    llm = _span("LLM", "2026-11-01 10:00:00+00:00", 2.0, model="gemini-2.5-flash")
    root = _span("Turn", "2026-11-01 10:00:00+00:00", 4.0, [llm, tool])
    conversation = {
        "conversation_name": "projects/p/locations/l/apps/a/conversations/c",
        "app": "projects/p/locations/l/apps/a",
        "start_time": "2026-11-01 10:00:00+00:00",
        "end_time": None,  # still going: no end, no duration yet
    }
    turn = {
        "turn_index": 0,
        "start_time": root["start_time"],
        "duration_seconds": 4.0,
        "messages": [],
        "spans": [root],
    }
    marked = trace_lines(conversation, [turn])
    lines = [Text.from_markup(line).plain for line in marked]
    head = "(a, 2026-11-01 10:00:00 UTC, 1 turn, in progress)"
    assert lines[0] == f"{conversation['conversation_name']}  {head}"
    bars = {line.split()[0]: line.split("|")[1] for line in lines if "|" in line}
    quarter = BAR_WIDTH // 4
    assert bars["Turn"] == FILLED * BAR_WIDTH
    assert bars["LLM"] == FILLED * (2 * quarter) + " " * (2 * quarter)  # the first half
    assert bars["Tool"] == " " * (2 * quarter) + FILLED * quarter + " " * quarter  # the third quarter
    tool_line = next(line for line in marked if line.lstrip().startswith("Tool"))
    assert "[red]" in tool_line and tool_line.endswith("✗ error[/red]")
    assert "LLM gemini-2.5-flash" in next(line for line in lines if "LLM" in line)


def test_a_trace_reads_its_conversations_partition_alone_and_answers_the_same(tmp_path: Path) -> None:
    """Found by name among its app's parts, read from its partition's: the same row and turns as
    from every part, and the tables whole again afterwards."""
    from pipelines.serve.lookups import conversation_turns, find_conversation

    warehouse = samples.build_warehouse(tmp_path)[1]
    _, item = next(iter(samples.all_conversations()))
    with warehouse.connect(read_only=True) as conn:
        (everything,) = conn.execute("SELECT count(*) FROM spans").fetchone()
        scoped = find_conversation(conn, item["name"], warehouse.scoped_parts_root)
        turns = conversation_turns(conn, scoped, warehouse.scoped_parts_root)
        assert conn.execute("SELECT count(*) FROM spans").fetchone() == (everything,)
        whole = find_conversation(conn, item["name"])
        assert scoped == whole and turns == conversation_turns(conn, whole)
    assert len(turns) == len(item["turns"]) and all(turn["spans"] for turn in turns)
