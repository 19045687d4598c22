"""The dashboard's trace waterfalls: a few conversations' spans on the conversation's timeline, a
chart each, as `ces-pipeline trace` prints them.

Drawn are the window's 3 slowest and 3 most failing conversations of all the apps shown
(`notable_conversations`, read from a daily rollup: a few rows a day however long the history),
so a page of 200 apps has a few traces, not hundreds; and the conversations that the newest
evaluation runs' failures replayed (6 at most), to which the failures chart links. Each trace reads
its own day's part of `spans`, so the section costs a few small reads, not the history."""

from __future__ import annotations

import hashlib
import html
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import plotly.graph_objects as go

from pipelines.report.data import ReportData, Rows
from pipelines.report.figures import Chart, Spec, add_note, empty_chart, finish_rows, short_name
from pipelines.transform.schemas import SPANS
from pipelines.warehouse import parts
from pipelines.warehouse.queries import conversation_rows
from pipelines.warehouse.span_rows import span_failed, span_label, span_start

NOTABLE_PER_KIND = 3
"""Slowest and most failing conversations drawn, of all the apps shown (the query keeps 3 of each
per app)."""
MAX_REPLAYED = 6
"""Conversations of evaluation failures drawn (and linked from the failures chart), at most."""
MAX_SPANS = 150
"""Spans drawn per conversation; `ces-pipeline trace` prints them all."""
LABEL_WIDTH = 46
COLOURS = {"Turn": "#8c959f", "LLM": "#1f77b4", "Tool": "#ff7f0e", "failed": "#cf222e"}
OTHER_COLOUR = "#2ca02c"


@dataclass(frozen=True)
class Traced:
    """A conversation the page draws, the day of its partition, and why it is drawn."""

    conversation_name: str
    app: str
    day: date
    why: str

    @property
    def anchor(self) -> str:
        """The id of its chart on the page: its id, and a hash of its name (ids repeat across apps)."""
        digest = hashlib.sha1(self.conversation_name.encode()).hexdigest()[:6]
        return f"trace-{re.sub(r'[^A-Za-z0-9_-]', '-', short_name(self.conversation_name))}-{digest}"


def traced_conversations(data: ReportData) -> list[Traced]:
    """The window's NOTABLE_PER_KIND slowest and most failing conversations (of every app the
    page shows: a few charts however many apps), then those the failures of the newest
    evaluation runs replayed and the warehouse holds (MAX_REPLAYED); each once, with every reason."""
    found: dict[str, tuple[str, date]] = {}
    reasons: dict[str, list[str]] = defaultdict(list)
    notable = data["notable_conversations"]
    slowest = sorted(
        (row for row in notable if row["kind"] == "slowest"),
        key=lambda row: (-(row["duration_seconds"] or 0), row["conversation_name"]),
    )
    failing = sorted(
        (row for row in notable if row["kind"] == "failing"),
        key=lambda row: (
            -row["erroring_tool_calls"],
            -(row["duration_seconds"] or 0),
            row["conversation_name"],
        ),
    )
    for row in slowest[:NOTABLE_PER_KIND] + failing[:NOTABLE_PER_KIND]:
        found.setdefault(row["conversation_name"], (row["app"], row["day"]))
        reasons[row["conversation_name"]].append(
            f"among the slowest ({row['duration_seconds']:,.1f} s)"
            if row["kind"] == "slowest"
            else f"{row['erroring_tool_calls']} erroring tool calls"
        )
    replayed: set[str] = set()
    for row in data["evaluation_failures"]:
        name = row["conversation_name"]
        if row["conversation_day"] is None or (name not in replayed and len(replayed) >= MAX_REPLAYED):
            continue
        replayed.add(name)
        found.setdefault(name, (row["app"], row["conversation_day"]))
        reason = f"replayed by the failed evaluation {short_name(row['evaluation_name'])}"
        if reason not in reasons[name]:
            reasons[name].append(reason)
    return [Traced(name, app, day, "; ".join(reasons[name])) for name, (app, day) in found.items()]


def link_failures(data: ReportData, traced: list[Traced]) -> None:
    """Give each evaluation failure whose conversation has a waterfall its chart's anchor."""
    anchors = {conversation.conversation_name: conversation.anchor for conversation in traced}
    for row in data["evaluation_failures"]:
        row["trace_anchor"] = anchors.get(row["conversation_name"])


def read_traces(
    conn: duckdb.DuckDBPyConnection, traced: list[Traced], parts_root: Path | None = None
) -> dict[str, Rows]:
    """Each drawn conversation's spans, from its day's part only (`parts_root`: a DuckDB file's
    parts, of which the drawn partitions' alone are listed)."""
    with parts.reading_only(conn, parts_root, [(one.app, one.day) for one in traced]):
        return {
            one.conversation_name: conversation_rows(conn, SPANS, one.conversation_name, one.day)
            for one in traced
        }


def _label(span: dict[str, Any]) -> str:
    """`turn N · name`, indented by depth and padded to LABEL_WIDTH with no-break spaces: plotly
    right-aligns tick labels, and in a monospace font labels of one width line up on the left."""
    text = f"turn {span['turn_index']} · " + "  " * (span["depth"] or 0) + span_label(span)
    return html.escape(text[:LABEL_WIDTH].ljust(LABEL_WIDTH)).replace(" ", "\u00a0")


def _colour(span: dict[str, Any]) -> str:
    return COLOURS["failed"] if span_failed(span) else COLOURS.get(span["name"], OTHER_COLOUR)


def waterfall_chart(conversation: Traced, spans: Rows) -> Chart:
    """The spans as bars on the conversation's timeline, a row each in turn and tree order,
    failed spans red; hover gives each its start and duration."""
    spec = Spec(
        conversation.anchor,
        "Traces",
        f"{short_name(conversation.app)} · conversation {short_name(conversation.conversation_name)}",
        f"{conversation.why} · each span from its turn's start, in seconds "
        f"(ces-pipeline trace {short_name(conversation.conversation_name)} prints it)",
        wide=True,
    )
    timed = [span for span in spans if span["start_time"] is not None][:MAX_SPANS]
    if not timed:
        return empty_chart(spec, "No spans of this conversation in the warehouse")
    starts: dict[int, float] = {}
    for span in timed:  # a turn's root span comes first
        starts.setdefault(span["turn_index"], span_start(span))
    labels = [_label(span) for span in timed]
    figure = go.Figure(
        go.Bar(
            y=list(range(len(timed))),
            base=[span_start(span) - starts[span["turn_index"]] for span in timed],
            x=[span["duration_seconds"] or 0.0 for span in timed],
            orientation="h",
            marker={"color": [_colour(span) for span in timed]},
            customdata=[
                [label, "failed" if span_failed(span) else "ok"]
                for label, span in zip(labels, timed, strict=True)
            ],
            hovertemplate="%{customdata[0]}<br>from %{base:.3f} s, %{x:.3f} s (%{customdata[1]})"
            "<extra></extra>",
            showlegend=False,
        )
    )
    if len(spans) > len(timed):
        add_note(figure, f"the first {len(timed)} of {len(spans)} spans", right=True)
    ticks = {
        "tickvals": list(range(len(timed))),
        "ticktext": labels,
        "tickfont": {"family": "monospace", "size": 11},
    }
    return finish_rows(figure, spec, "seconds", 330, height=max(320, 110 + 17 * len(timed)), yaxes=ticks)


def waterfall_charts(traced: list[Traced], traces: dict[str, Rows]) -> list[Chart]:
    return [waterfall_chart(conversation, traces[conversation.conversation_name]) for conversation in traced]
