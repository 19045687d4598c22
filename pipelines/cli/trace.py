"""`ces-pipeline trace CONVERSATION`: a conversation's turns and their span trees in the terminal.

Each span is a line: its name indented by depth, its duration, and a bar placed on its turn's
timeline (the turn's root span), so where a turn's time went shows at a glance. Spans that
failed (an `error` attribute, or an HTTP status of 400 or more) are marked, and each tool call
is listed with the size of its arguments and whether its response was an error. The tree is the
one `ces-pipeline mcp`'s `get_conversation_trace` returns (`pipelines.serve.lookups`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from rich.markup import escape

from pipelines.cli.common import counted, out
from pipelines.config import Settings
from pipelines.warehouse.span_rows import span_failed, span_label, span_start

BAR_WIDTH = 40
NAME_WIDTH = 36
FILLED = "█"


def cmd_trace(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.serve.lookups import conversation_turns, find_conversation
    from pipelines.warehouse.duck import Warehouse

    warehouse = Warehouse.from_settings(settings.storage)
    root = warehouse.scoped_parts_root
    with warehouse.connect(read_only=True) as conn:
        conversation = find_conversation(conn, args.conversation, root)
        turns = conversation_turns(conn, conversation, root)
    for line in trace_lines(conversation, turns):
        out.print(line, soft_wrap=True, highlight=False)
    return 0


def trace_lines(conversation: dict[str, Any], turns: list[dict[str, Any]]) -> list[str]:
    """The printed trace, as rich markup lines (escaped: names are data)."""
    head = ", ".join(
        str(part)
        for part in (
            conversation["app"].rsplit("/", 1)[-1],
            _clock(conversation["start_time"], with_day=True),
            counted(len(turns), "turn"),
            _seconds(conversation.get("duration_seconds")) if conversation.get("end_time") else "in progress",
            conversation.get("source"),
            conversation.get("channel_type"),
        )
        if part
    )
    lines = [f"[bold]{escape(conversation['conversation_name'])}[/bold]  ({escape(head)})"]
    for turn in turns:
        said = turn.get("user_intended_text") or _said(turn, "user")
        lines += [
            "",
            f"[bold]turn {turn['turn_index']}[/bold]  {_clock(turn['start_time'])}  "
            f"{_seconds(turn.get('duration_seconds'))}  {escape(repr(said)) if said else ''}".rstrip(),
        ]
        for root in turn["spans"]:
            lines += _span_lines(root, root, 0)
        lines += _tool_lines(turn)
    return lines


def _span_lines(span: dict[str, Any], root: dict[str, Any], depth: int) -> Iterator[str]:
    label = ("  " * depth + span_label(span))[:NAME_WIDTH].ljust(NAME_WIDTH)
    failed = span_failed(span)
    mark = "  [red]✗ error[/red]" if failed else ""
    style = "red" if failed else "cyan"
    yield (
        f"  {escape(label)} {_seconds(span['duration_seconds']):>9}  "
        f"|[{style}]{_bar(span, root)}[/{style}]|{mark}"
    )
    for child in span["children"]:
        yield from _span_lines(child, root, depth + 1)


def _bar(span: dict[str, Any], root: dict[str, Any]) -> str:
    """The span's place on the turn's timeline, BAR_WIDTH characters wide (at least one filled)."""
    start, total = span_start(root), root["duration_seconds"] or 0.0
    if not total or span["start_time"] is None:
        return FILLED * BAR_WIDTH if span is root else " " * BAR_WIDTH
    offset = (span_start(span) - start) / total
    first = min(BAR_WIDTH - 1, max(0, int(offset * BAR_WIDTH)))
    length = max(1, round((span["duration_seconds"] or 0.0) / total * BAR_WIDTH))
    length = min(length, BAR_WIDTH - first)
    return " " * first + FILLED * length + " " * (BAR_WIDTH - first - length)


def _tool_lines(turn: dict[str, Any]) -> list[str]:
    """Each tool call of the turn: its name, its arguments' size, and its response's outcome."""
    calls, outcomes = [], {}
    for message in turn["messages"]:
        for chunk in message["chunks"]:
            if "tool_call" in chunk:
                calls.append(chunk["tool_call"])
            if "tool_response" in chunk:
                response = chunk["tool_response"]
                outcomes[response.get("tool_call_id")] = response.get("is_error")
    lines = []
    for call in calls:
        name = (
            call.get("display_name")
            or call.get("toolset_tool_id")
            or (call.get("tool") or "?").rsplit("/", 1)[-1]
        )
        size = len(json.dumps(call.get("args"), separators=(",", ":"))) if call.get("args") is not None else 0
        outcome = outcomes.get(call.get("tool_call_id"), "missing")
        said = {True: "[red]error[/red]", False: "[green]ok[/green]"}.get(outcome, "no response")
        lines.append(f"  tool {escape(name)}  args {size:,} B  → {said}")
    return lines


def _said(turn: dict[str, Any], role: str) -> str:
    return " ".join(
        chunk["text"]
        for message in turn["messages"]
        if message["role"] == role
        for chunk in message["chunks"]
        if chunk.get("text")
    )


def _clock(value: str | None, *, with_day: bool = False) -> str:
    if value is None:
        return ""
    moment = datetime.fromisoformat(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC" if with_day else "%H:%M:%S")


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:,.3f} s"
