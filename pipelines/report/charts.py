"""The dashboard's charts in page order: conversation volume, latency, tools, LLM usage and agents,
declared here; then each app's evaluation charts."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import plotly.graph_objects as go

from pipelines.report.cost_charts import COST_CHARTS, mark_anomalies
from pipelines.report.data import APP_VOLUME, VOLUME_SPLITS, ReportData, Rows, apps_of, groups
from pipelines.report.evaluation_charts import EVALUATION_CHARTS, evaluation_charts
from pipelines.report.figures import (
    DAY_AXIS,
    Chart,
    Spec,
    bars_per_day,
    by_series,
    days_of,
    empty_chart,
    finish,
    heatmap,
    percentile_lines,
    percentile_traces,
    short_name,
    subplot_grid,
)
from pipelines.report.trajectory_charts import TRAJECTORY_CHARTS
from pipelines.report.waterfalls import Traced, link_failures, waterfall_charts

COMPONENT_ORDER = ("Turn", "LLM", "Tool", "Agent", "Callback", "Guardrail", "TTS", "VAD", "Other")
NO_CONVERSATIONS = "No conversations in this window"


def component_latency_chart(spec: Spec, rows: Rows) -> Chart:
    """p50, p90 and p99 lines of span durations, a component a subplot."""
    present = {row["component"] for row in rows}
    components = [c for c in COMPONENT_ORDER if c in present] + sorted(present - set(COMPONENT_ORDER))
    figure, positions = subplot_grid(components, 3, vertical=0.36, horizontal=0.07)
    grid_rows = positions[-1]["row"]
    by_component = groups(rows, lambda row: row["component"])
    for component, position in zip(components, positions, strict=True):
        columns = ("p50_seconds", "p90_seconds", "p99_seconds")
        for trace in percentile_traces(by_component[component], columns, legend=component == components[0]):
            figure.add_trace(trace, **position)
    chart = finish(
        figure,
        spec,
        "seconds",
        days=len(days_of(rows)),
        height=280 * grid_rows + 150,
        margin={"l": 70, "r": 20, "t": 86, "b": 90},
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.005, "x": 0},
    )
    figure.update_xaxes(title_text="")
    figure.update_xaxes(title_text=DAY_AXIS, row=grid_rows)
    return chart


def tool_error_chart(spec: Spec, rows: Rows) -> Chart:
    """Error rates of the tools and days with responses."""
    responded = [row for row in rows if row["responses"]]
    if not responded:
        return empty_chart(spec)
    return heatmap(
        spec,
        responded,
        x="day",
        y="display_name",
        z="error_rate",
        text="{error_rate:.0%}",
        hover="{error_rate:.1%}: {errors} of {responses} responses",
        colours=("Reds", "error rate", ".0%"),
        x_title=DAY_AXIS,
        y_title="tool",
        zmax=0.05,
    )


def token_chart(spec: Spec, rows: Rows) -> Chart:
    """Input and output tokens of a model stacked in one bar a day, the output hatched."""
    days = days_of(rows)
    figure = go.Figure()
    for kind in ("input", "output"):
        for model, points in by_series(rows, lambda row: str(row["model"]), f"{kind}_tokens").items():
            figure.add_trace(
                go.Bar(
                    name=f"{model} · {kind}",
                    legendgroup=model,
                    x=days,
                    y=[points.get(day, 0) for day in days],
                    offsetgroup=model,
                    marker={"pattern": {"shape": "/" if kind == "output" else ""}},
                )
            )
    return finish(figure, spec, "tokens", days=len(days), barmode="relative")


def _volume(split: str) -> Spec:
    """Conversations per day by one of `conversation_volume`'s splits, stacked (input types side by
    side: a conversation may have several)."""
    note = "a conversation counts once under each input type it used" if split == "input_type" else ""
    title = f"Conversations per day by {split.replace('_', ' ')}"
    series = (lambda row: short_name(row["value"])) if split == "app" else (lambda row: str(row["value"]))
    query = f"conversation_volume by {split}"
    draw = partial(
        bars_per_day, series=series, value="conversations", y_title="conversations", stacked=not note
    )
    return Spec(f"volume-{split}", "Conversations", title, note, NO_CONVERSATIONS, query, draw)


def _percentiles(*texts: str, query: str, column: str, y_title: str, **options: Any) -> Spec:
    """A chart of percentile lines of `query`'s `column` (`percentile_lines`); `texts`: the Spec's
    id, section, title, subtitle and what it says without data."""
    return Spec(
        *texts, query=query, draw=partial(percentile_lines, column=column, y_title=y_title, **options)
    )


CHARTS = (
    *map(_volume, VOLUME_SPLITS),
    _percentiles(
        "turns-per-conversation",
        "Conversations",
        "Turns per conversation",
        "p50, p90, p99 per day",
        NO_CONVERSATIONS,
        query="conversation_length",
        column="turns_{}",
        y_title="turns",
    ),
    _percentiles(
        "conversation-duration",
        "Conversations",
        "Conversation duration",
        "p50, p90, p99 per day, ended conversations",
        "No ended conversations in this window",
        query="conversation_length",
        column="duration_{}_seconds",
        y_title="seconds",
    ),
    Spec(
        "component-latency",
        "Latency",
        "Span latency by component",
        "p50, p90, p99 of span durations per day; TOOL:x and AGENT:x spans count as Tool and Agent",
        "No spans in this window",
        "component_latency",
        component_latency_chart,
        wide=True,
    ),
    _percentiles(
        "perceived-latency",
        "Latency",
        "Perceived latency per turn",
        "the root span's perceived latency (ms): p50, p90, p99 per day",
        "No turns with a perceived latency in this window",
        query="turn_latency",
        column="perceived_{}_ms",
        y_title="milliseconds",
    ),
    _percentiles(
        "turn-duration",
        "Latency",
        "Turn duration",
        "the root span's duration: p50, p90, p99 per day",
        "No turns in this window",
        query="turn_latency",
        column="duration_{}_seconds",
        y_title="seconds",
    ),
    Spec(
        "tool-calls",
        "Tools",
        "Tool calls per day by tool",
        "",
        "No tool calls in this window",
        "tool_error_trend",
        partial(bars_per_day, series=lambda row: str(row["display_name"]), value="calls", y_title="calls"),
    ),
    Spec(
        "tool-error-rate",
        "Tools",
        "Tool error rate per day",
        "errored responses / responses",
        "No tool responses in this window",
        "tool_error_trend",
        tool_error_chart,
    ),
    Spec(
        "token-usage",
        "LLM usage",
        "LLM tokens per day by model",
        "input tokens (solid) and output tokens (hatched)",
        "No LLM spans in this window",
        "token_usage",
        token_chart,
    ),
    _percentiles(
        "first-chunk",
        "LLM usage",
        "LLM time to first chunk by model",
        "p50 (dotted) and p90 (solid) per day",
        "No LLM spans with a time to first chunk",
        query="token_usage",
        column="first_chunk_{}_ms",
        y_title="milliseconds",
        by="model",
        percentiles=2,
    ),
    Spec(
        "agent-transfers",
        "Agents",
        "Agent transfers",
        "from agent (rows) → to agent (columns); the first transfer leaves the entry agent",
        "No agent transfers in this window",
        "agent_transfer_flows",
        partial(
            heatmap,
            x="to_label",
            y="from_label",
            z="transfers",
            text="{transfers}",
            hover="{transfers} transfers in {conversations} conversations",
            colours=("Blues", "transfers", ""),
            x_title="to agent",
            y_title="from agent",
        ),
    ),
)
QUERIES = {spec.query for spec in (*CHARTS, *TRAJECTORY_CHARTS, *COST_CHARTS, *EVALUATION_CHARTS)} | {
    "evaluation_regressions",
    "anomalies",
    "notable_conversations",
}
"""The named queries the page reads (`conversation_volume by X`: with by=X)."""


def build_charts(
    data: ReportData, traced: list[Traced], traces: dict[str, Rows], apps: int = 0
) -> list[Chart]:
    """The conversation and cost charts (by app only with several apps), anomalous days marked,
    then the evaluation charts, their failures linked to the traces drawn last. With apps left
    out (`apps`: how many there are), a chart whose rows sum every app says so."""
    specs = [
        spec
        for spec in (*CHARTS, *TRAJECTORY_CHARTS, *COST_CHARTS)
        if spec.id != "volume-app" or len(apps_of(data)) > 1
    ]
    charts = [_counting(spec, data[spec.query], apps).chart(data[spec.query]) for spec in specs]
    for chart in charts:
        mark_anomalies(chart, data["anomalies"])
    link_failures(data, traced)
    return charts + evaluation_charts(data) + waterfall_charts(traced, traces)


def _counting(spec: Spec, rows: Rows, apps: int) -> Spec:
    """`spec`, its subtitle saying that its rows count all `apps` apps where they name none (the
    window's volume by source, the evaluations' tool-call match) while the page draws the busiest."""
    if not apps or spec.query == APP_VOLUME or not rows or "app" in rows[0]:
        return spec
    said = f"all {apps} apps, not only those drawn"
    return replace(spec, subtitle=f"{spec.subtitle} · {said}" if spec.subtitle else said)
