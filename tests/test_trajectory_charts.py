"""The window's most followed trajectories (top_trajectories, summed from the daily rollup) equal
those counted from each conversation's trajectory, and the dashboard draws them and the tool-call
match pass rates as the queries return them."""

from __future__ import annotations

from collections import Counter

import pytest
import trend_samples as samples
from pytest import approx

from pipelines.report.trajectory_charts import TRAJECTORY_CHARTS
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import run_query


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return samples.build_warehouse(tmp_path_factory.mktemp("trajectories"))[1]


def _rows(warehouse: Warehouse, query: str, params: dict | None = None) -> list[dict]:
    columns, rows = run_query(warehouse, query, params or {})
    return [dict(zip(columns, row, strict=True)) for row in rows]


def test_the_windows_top_trajectories_are_counted_from_the_conversations(warehouse: Warehouse) -> None:
    with warehouse.connect(read_only=True) as conn:
        followed = conn.execute("SELECT app, trajectory FROM conversation_trajectories").fetchall()
    counts = Counter(followed)
    totals = Counter(app for app, _ in followed)
    found = _rows(warehouse, "top_trajectories", {"top": 3})
    for app in totals:
        expected = sorted(((-n, t) for (a, t), n in counts.items() if a == app))[:3]
        mine = [row for row in found if row["app"] == app]
        shown = [(t or "(no tool calls or transfers)", -n) for n, t in expected]  # '': neither
        assert [(row["trajectory"], row["conversations"]) for row in mine] == shown
        assert [row["share"] for row in mine] == approx([-n / totals[app] for n, _ in expected], abs=1e-4)


def test_the_charts_draw_the_queries_rows(warehouse: Warehouse) -> None:
    trajectories, match = (spec for spec in TRAJECTORY_CHARTS)
    rows = _rows(warehouse, "top_trajectories")
    chart = trajectories.chart(rows)
    assert sorted(x for trace in chart.figure.data for x in trace.x) == sorted(
        r["conversations"] for r in rows
    )
    matched = _rows(warehouse, "evaluation_tool_match")
    assert matched, "the samples' evaluations expect tool calls"
    bars = {
        trace.name: dict(zip(trace.x, trace.y, strict=True)) for trace in match.chart(matched).figure.data
    }
    for row in matched:
        kind = row["tool_match"].replace("_", " ")
        assert bars["turns passed"][kind] == row["turn_pass_rate"]
        assert bars["results passed"][kind] == row["result_pass_rate"]
