"""The dashboard's trace waterfalls: the window's slowest and failing conversations of all apps and
the conversations the newest evaluation runs' failures replayed, each a chart whose bars sit on
the conversation's timeline, and each failure's label a link to its conversation's chart."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path

import pytest
import trend_samples as samples
from pytest import approx

from pipelines.report import write_report
from pipelines.report.waterfalls import (
    COLOURS,
    MAX_REPLAYED,
    MAX_SPANS,
    NOTABLE_PER_KIND,
    Traced,
    waterfall_chart,
)
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import run_query

DAY = date(2026, 11, 1)
CONVERSATION = "projects/p/locations/l/apps/a/conversations/c-1"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return samples.build_warehouse(tmp_path_factory.mktemp("waterfalls"))[1]


def _select(warehouse: Warehouse, sql: str) -> list[tuple]:
    with warehouse.connect(read_only=True) as conn:
        return conn.execute(sql).fetchall()


def _expected(warehouse: Warehouse) -> dict[str, date]:
    """By hand from the tables: of all apps, the NOTABLE_PER_KIND longest conversations and those
    with the most erroring tool responses (then the longer), and every loaded conversation an
    evaluation failure of the newest completed runs replayed (MAX_REPLAYED at most)."""
    conversations = _select(
        warehouse, "SELECT conversation_name, partition_date, duration_seconds FROM conversations"
    )
    errors = Counter(
        name for (name,) in _select(warehouse, "SELECT conversation_name FROM tool_responses WHERE is_error")
    )
    slowest = sorted((r for r in conversations if r[2] is not None), key=lambda r: (-r[2], r[0]))
    failing = sorted(
        (r for r in conversations if errors[r[0]]), key=lambda r: (-errors[r[0]], -(r[2] or 0), r[0])
    )
    expected = {name: day for name, day, _ in slowest[:NOTABLE_PER_KIND] + failing[:NOTABLE_PER_KIND]}
    columns, rows = run_query(warehouse, "evaluation_failures", {})
    replayed = []
    for row in rows:
        found = dict(zip(columns, row, strict=True))
        if found["conversation_day"] is not None and found["conversation_name"] not in replayed:
            replayed.append(found["conversation_name"])
            expected.setdefault(found["conversation_name"], found["conversation_day"])
    assert len(replayed) <= MAX_REPLAYED
    return expected


def test_the_traces_are_the_slowest_failing_and_replayed_conversations_and_failures_link_to_them(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    report = write_report(warehouse, str(tmp_path / "report.html"))
    expected = _expected(warehouse)
    anchors = {Traced(name, "", day, "").anchor for name, day in expected.items()}
    assert len(anchors) == len(expected) >= 4
    assert {chart for chart in report.chart_ids if chart.startswith("trace-")} == anchors
    page = Path(report.path).read_text()
    columns, rows = run_query(warehouse, "evaluation_failures", {})
    replayed = {dict(zip(columns, row, strict=True))["conversation_name"] for row in rows} & set(expected)
    assert replayed, "the samples' evaluation failures replay loaded conversations"
    for name in replayed:  # plotly writes the label's <a> into the page's JSON
        assert json.dumps(f'<a href="#{Traced(name, "", expected[name], "").anchor}">')[1:-1] in page.replace(
            "\\u003c", "<"
        ).replace("\\u003e", ">")


def _span(turn: int, span_id: int, depth: int, kind: str, start: str, seconds: float, **attributes) -> dict:
    return {
        "turn_index": turn,
        "span_id": span_id,
        "depth": depth,
        "name": kind,
        "start_time": start,
        "duration_seconds": seconds,
        "attributes": attributes,
    }


def test_each_bar_starts_where_its_span_started_on_its_turns_timeline() -> None:
    spans = [
        _span(0, 0, 0, "Turn", "2026-11-01 10:00:00+00:00", 3.0),
        _span(0, 1, 1, "LLM", "2026-11-01 10:00:00.500+00:00", 1.5, model="gemini-2.5-flash"),
        _span(0, 2, 1, "Tool", "2026-11-01 10:00:02+00:00", 0.75, **{"http status": 503, "name": "Lookup"}),
        _span(1, 0, 0, "Turn", "2026-11-01 10:00:30+00:00", 2.0),
    ]
    chart = waterfall_chart(Traced(CONVERSATION, "projects/p/locations/l/apps/a", DAY, "why"), spans)
    (bars,) = chart.figure.data
    assert list(bars.base) == approx([0.0, 0.5, 2.0, 0.0])  # from each turn's start
    assert list(bars.x) == approx([3.0, 1.5, 0.75, 2.0])
    assert list(bars.marker.color) == [COLOURS["Turn"], COLOURS["LLM"], COLOURS["failed"], COLOURS["Turn"]]
    labels = [label.replace("\u00a0", " ").rstrip() for label in chart.figure.layout.yaxis.ticktext]
    assert len({len(label) for label in chart.figure.layout.yaxis.ticktext}) == 1  # one width: aligned
    assert labels == [
        "turn 0 · Turn",
        "turn 0 ·   LLM gemini-2.5-flash",
        "turn 0 ·   Tool Lookup",
        "turn 1 · Turn",
    ]
    assert chart.spec.id.startswith("trace-c-1-") and chart.spec.section == "Traces"


def test_a_long_trace_draws_its_first_spans_and_says_so() -> None:
    spans = [_span(0, i, 1, "LLM", f"2026-11-01 10:00:{i % 60:02d}+00:00", 0.1) for i in range(MAX_SPANS + 5)]
    chart = waterfall_chart(Traced(CONVERSATION, "a", DAY, "why"), spans)
    assert len(chart.figure.data[0].x) == MAX_SPANS
    assert [a.text for a in chart.figure.layout.annotations] == [
        f"the first {MAX_SPANS} of {MAX_SPANS + 5} spans"
    ]
