"""The dashboard's conversation charts (volume, latency, tools, LLM usage, agents): rows in, figures out."""

from __future__ import annotations

import plotly.graph_objects as go

from pipelines.report.data import ReportData, Rows
from pipelines.report.evaluation_charts import evaluation_charts
from pipelines.report.figures import (
    DAY_AXIS,
    PERCENTILES,
    Chart,
    Heading,
    bars_per_day,
    by_series,
    day_label,
    days_of,
    empty_chart,
    finish,
    heatmap,
    percentile_lines,
    percentile_traces,
    short_name,
    subplot_grid,
)

COMPONENT_ORDER = ("Turn", "LLM", "Tool", "Agent", "Callback", "Guardrail", "TTS", "VAD", "Other")


def component_latency_chart(rows: Rows) -> Chart:
    heading = Heading(
        "component-latency",
        "Latency",
        "Span latency by component",
        "p50, p90, p99 of span durations per day; TOOL:x and AGENT:x spans count as Tool and Agent",
        wide=True,
    )
    if not rows:
        return empty_chart(heading, "No spans in this window")
    present = {row["component"] for row in rows}
    components = [c for c in COMPONENT_ORDER if c in present] + sorted(present - set(COMPONENT_ORDER))
    cols = 3
    figure, grid_rows = subplot_grid(components, cols, vertical=0.36, horizontal=0.07)
    for index, component in enumerate(components):
        mine = [row for row in rows if row["component"] == component]
        columns = [f"{name}_seconds" for name, _, _ in PERCENTILES]
        for trace in percentile_traces(mine, columns, legend=index == 0):
            figure.add_trace(trace, row=index // cols + 1, col=index % cols + 1)
    chart = finish(
        figure,
        heading,
        "seconds",
        days=len(days_of(rows)),
        height=280 * grid_rows + 150,
        margin={"l": 70, "r": 20, "t": 86, "b": 90},
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.005, "x": 0},
    )
    figure.update_xaxes(title_text="")
    figure.update_xaxes(title_text=DAY_AXIS, row=grid_rows)
    return chart


def tool_error_chart(rows: Rows) -> Chart:
    heading = Heading("tool-error-rate", "Tools", "Tool error rate per day", "errored responses / responses")
    responded = [row for row in rows if row["responses"]]
    if not responded:
        return empty_chart(heading, "No tool responses in this window")
    cells = {(str(row["display_name"]), day_label(row["day"])): row for row in responded}
    highest = max(float(row["error_rate"]) for row in responded)
    days = days_of(responded)
    return heatmap(
        heading,
        x=days,
        y=sorted({tool for tool, _ in cells}, key=str.lower),
        cells=cells,
        value="error_rate",
        text=lambda row: f"{row['error_rate']:.0%}",
        hover=lambda row: f"{row['error_rate']:.1%}: {row['errors']} of {row['responses']} responses",
        colorscale="Reds",
        colorbar={"title": {"text": "error rate"}, "tickformat": ".0%"},
        x_title=DAY_AXIS,
        y_title="tool",
        zmax=max(highest, 0.05),
        days=len(days),
    )


def token_chart(rows: Rows) -> Chart:
    heading = Heading(
        "token-usage",
        "LLM usage",
        "LLM tokens per day by model",
        "input tokens (solid) and output tokens (hatched)",
    )
    if not rows:
        return empty_chart(heading, "No LLM spans in this window")
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
    return finish(figure, heading, "tokens", days=len(days), barmode="relative")


def first_chunk_chart(rows: Rows) -> Chart:
    heading = Heading(
        "first-chunk", "LLM usage", "LLM time to first chunk by model", "p50 (dotted) and p90 (solid) per day"
    )
    measured = [row for row in rows if row["first_chunk_p50_ms"] is not None]
    if not measured:
        return empty_chart(heading, "No LLM spans with a time to first chunk")
    days = days_of(measured)
    figure = go.Figure()
    for percentile, dash in (("p50", "dot"), ("p90", "solid")):
        column = f"first_chunk_{percentile}_ms"
        several = len({row["app"] for row in measured}) > 1  # percentiles are per app and day
        series = (
            (lambda row: f"{short_name(row['app'])} {row['model']}")
            if several
            else (lambda row: str(row["model"]))
        )
        for model, points in by_series(measured, series, column).items():
            figure.add_trace(
                go.Scatter(
                    name=f"{model} {percentile}",
                    legendgroup=model,
                    x=days,
                    y=[points.get(day) for day in days],
                    mode="lines+markers",
                    line={"dash": dash},
                )
            )
    return finish(figure, heading, "milliseconds", days=len(days))


def transfer_chart(rows: Rows) -> Chart:
    heading = Heading(
        "agent-transfers",
        "Agents",
        "Agent transfers",
        "from agent (rows) → to agent (columns); the first transfer leaves the entry agent",
    )
    if not rows:
        return empty_chart(heading, "No agent transfers in this window")
    return heatmap(
        heading,
        x=sorted({str(row["to_label"]) for row in rows}),
        y=sorted({str(row["from_label"]) for row in rows}),
        cells={(str(row["from_label"]), str(row["to_label"])): row for row in rows},
        value="transfers",
        text=lambda row: str(row["transfers"]),
        hover=lambda row: f"{row['transfers']} transfers in {row['conversations']} conversations",
        colorscale="Blues",
        colorbar={"title": {"text": "transfers"}},
        x_title="to agent",
        y_title="from agent",
    )


def volume_charts(data: ReportData) -> list[Chart]:
    """Conversations per day, split by source, channel type, input type, language and app."""
    splits = {
        "source": ("by source", ""),
        "channel_type": ("by channel type", ""),
        "input_type": ("by input type", "a conversation counts once under each input type it used"),
        "language": ("by language", ""),
        "app": ("by app", ""),
    }
    charts = []
    for split, (by, subtitle) in splits.items():
        if split == "app" and len(data.apps) < 2:
            continue
        heading = Heading(f"volume-{split}", "Conversations", f"Conversations per day {by}", subtitle)
        charts.append(
            bars_per_day(
                heading,
                data.volume.get(split, []),
                (lambda row: short_name(row["value"])) if split == "app" else (lambda row: str(row["value"])),
                "conversations",
                "conversations",
                empty="No conversations in this window",
                stacked=split != "input_type",
            )
        )
    return charts


def build_charts(data: ReportData) -> list[Chart]:
    return [
        *volume_charts(data),
        percentile_lines(
            Heading(
                "turns-per-conversation", "Conversations", "Turns per conversation", "p50, p90, p99 per day"
            ),
            data.conversation_length,
            ("turns_p50", "turns_p90", "turns_p99"),
            "turns",
            empty="No conversations in this window",
        ),
        percentile_lines(
            Heading(
                "conversation-duration",
                "Conversations",
                "Conversation duration",
                "p50, p90, p99 per day, ended conversations",
            ),
            data.conversation_length,
            ("duration_p50_seconds", "duration_p90_seconds", "duration_p99_seconds"),
            "seconds",
            empty="No ended conversations in this window",
        ),
        component_latency_chart(data.component_latency),
        percentile_lines(
            Heading(
                "perceived-latency",
                "Latency",
                "Perceived latency per turn",
                "the root span's perceived latency (ms): p50, p90, p99 per day",
            ),
            data.turn_latency,
            ("perceived_p50_ms", "perceived_p90_ms", "perceived_p99_ms"),
            "milliseconds",
            empty="No turns with a perceived latency in this window",
        ),
        percentile_lines(
            Heading(
                "turn-duration", "Latency", "Turn duration", "the root span's duration: p50, p90, p99 per day"
            ),
            data.turn_latency,
            ("duration_p50_seconds", "duration_p90_seconds", "duration_p99_seconds"),
            "seconds",
            empty="No turns in this window",
        ),
        bars_per_day(
            Heading("tool-calls", "Tools", "Tool calls per day by tool"),
            data.tool_error_trend,
            lambda row: str(row["display_name"]),
            "calls",
            "calls",
            empty="No tool calls in this window",
        ),
        tool_error_chart(data.tool_error_trend),
        token_chart(data.token_usage),
        first_chunk_chart(data.token_usage),
        transfer_chart(data.agent_transfer_flows),
        *evaluation_charts(data),
    ]
