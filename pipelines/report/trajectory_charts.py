"""The dashboard's trajectory charts: the window's most followed sequences of tool calls and agent
transfers per app, and how evaluated turns that expect tool calls matched them."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from pipelines.report.data import Rows, groups
from pipelines.report.figures import Chart, Spec, finish, finish_rows, short_name

LABEL_CHARACTERS = 70
"""A trajectory's label on the axis: its first steps (hover gives them all)."""
MATCH_ORDER = ("exact", "in_order", "any_order", "none")


def _label(trajectory: str) -> str:
    return trajectory if len(trajectory) <= LABEL_CHARACTERS else trajectory[: LABEL_CHARACTERS - 1] + "…"


def trajectory_chart(spec: Spec, rows: Rows) -> Chart:
    """A bar per trajectory, its conversations in the window; an app a colour."""
    several = len({row["app"] for row in rows}) > 1
    figure = go.Figure()
    for app, members in groups(rows, lambda row: row["app"]).items():
        figure.add_trace(
            go.Bar(
                name=short_name(app),
                y=[
                    html.escape((f"{short_name(app)}: " if several else "") + _label(row["trajectory"]))
                    for row in members
                ],
                x=[row["conversations"] for row in members],
                orientation="h",
                customdata=[
                    [html.escape(row["trajectory"]), row["share"], row["avg_turns"], row["days"]]
                    for row in members
                ],
                hovertemplate="%{customdata[0]}<br>%{x} conversations (%{customdata[1]:.1%} of the app's), "
                "%{customdata[2]} turns on average, on %{customdata[3]} days<extra>%{fullData.name}</extra>",
            )
        )
    height = max(340, 120 + 24 * len(rows))
    yaxes = {"tickfont": {"size": 11}}
    return finish_rows(figure, spec, "conversations", 480, height=height, yaxes=yaxes, showlegend=several)


def tool_match_chart(spec: Spec, rows: Rows) -> Chart:
    """Per match kind, the pass rate of the evaluated turns and of their results, with counts."""
    ordered = sorted(rows, key=lambda row: MATCH_ORDER.index(row["tool_match"]))
    kinds = [row["tool_match"].replace("_", " ") for row in ordered]
    figure = go.Figure(
        [
            go.Bar(
                name=f"{what} passed",
                x=kinds,
                y=[row[f"{prefix}_pass_rate"] for row in ordered],
                text=[f"{row[f'{prefix}s_passed']} of {row[f'{prefix}s']}" for row in ordered],
                textposition="outside",
            )
            for what, prefix in (("turns", "turn"), ("results", "result"))
        ]
    )
    return finish(
        figure,
        spec,
        "pass rate",
        x_title="observed tool calls against the expected",
        yaxes={"tickformat": ".0%", "range": [0, 1.15]},
        barmode="group",
        hovermode="closest",
    )


TRAJECTORY_CHARTS = (
    Spec(
        "trajectories",
        "Trajectories",
        "Most followed trajectories",
        "tool calls and agent transfers in order; conversations in the window (from each day's 20 "
        "most followed trajectories)",
        "No conversations in this window",
        "top_trajectories",
        trajectory_chart,
        wide=True,
    ),
    Spec(
        "tool-match",
        "Trajectories",
        "Evaluated turns by tool-call match",
        "turns of evaluation results that expect tool calls: exact, in order (others between), any "
        "order, or none; the share of them, and of their results, that passed",
        "No evaluated turn expects tool calls",
        "evaluation_tool_match",
        tool_match_chart,
    ),
)
