"""Plotly figures for the dashboard, built from the named queries' rows (plain data in, figures out).

Every chart has a title, a one-line subtitle saying what is measured, labelled axes and UTC days
on its x axis. A chart without data still appears, saying so, so the page keeps its shape.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pipelines.report.data import ReportData, Rows

DAY_AXIS = "Day (UTC)"
HEIGHT = 390
COMPONENT_ORDER = ("Turn", "LLM", "Tool", "Agent", "Callback", "Guardrail", "TTS", "VAD", "Other")
LATENCY_KINDS = (
    ("tool", "Tools"),
    ("llm_call", "Models"),
    ("guardrail", "Guardrails"),
    ("callback", "Callbacks"),
)
PERCENTILES = (("p50", "dot", "#2ca02c"), ("p90", "solid", "#1f77b4"), ("p99", "dash", "#d62728"))
"""Percentile lines: name, dash style and colour, the same on every chart."""


@dataclass(frozen=True)
class Heading:
    """Where a chart goes and what it says about itself."""

    id: str
    section: str
    title: str
    subtitle: str = ""
    wide: bool = False


@dataclass(frozen=True)
class Chart:
    """One chart of the page: its heading, the figure, and whether it had data."""

    heading: Heading
    figure: go.Figure
    has_data: bool

    @property
    def id(self) -> str:
        return self.heading.id

    @property
    def title(self) -> str:
        return self.heading.title

    @property
    def section(self) -> str:
        return self.heading.section

    @property
    def wide(self) -> bool:
        return self.heading.wide


def _day(value: Any) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)


def _days(rows: Rows) -> list[str]:
    return sorted({_day(row["day"]) for row in rows})


def _short(resource: Any) -> str:
    return str(resource).rsplit("/", 1)[-1]


def _title(heading: Heading) -> dict[str, Any]:
    title: dict[str, Any] = {"text": heading.title, "x": 0.01, "xanchor": "left", "font": {"size": 16}}
    if heading.subtitle:
        title["subtitle"] = {"text": heading.subtitle, "font": {"size": 12, "color": "#57606a"}}
    return title


def _finish(
    figure: go.Figure,
    heading: Heading,
    y_title: str,
    *,
    x_title: str = DAY_AXIS,
    days: int = 0,
    **layout: Any,
) -> Chart:
    figure.update_layout(
        title=_title(heading),
        height=HEIGHT,
        margin={"l": 70, "r": 20, "t": 86 if heading.subtitle else 60, "b": 60},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
        hovermode="x unified",
    )
    figure.update_layout(**layout)
    figure.update_yaxes(title_text=y_title, rangemode="tozero")
    if x_title == DAY_AXIS:
        figure.update_xaxes(type="date", tickformat="%Y-%m-%d", hoverformat="%Y-%m-%d (UTC)")
        if days and days <= 14:
            figure.update_xaxes(dtick=86_400_000, tick0="2000-01-01")
    figure.update_xaxes(title_text=x_title)
    return Chart(heading, figure, has_data=True)


def _empty(heading: Heading, message: str) -> Chart:
    figure = go.Figure()
    figure.add_annotation(
        text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 14}
    )
    figure.update_layout(
        title=_title(heading),
        height=HEIGHT,
        xaxis={"visible": False},
        yaxis={"visible": False},
        margin={"l": 70, "r": 20, "t": 86 if heading.subtitle else 60, "b": 60},
    )
    return Chart(heading, figure, has_data=False)


def _by_series(rows: Rows, series: Callable[[dict[str, Any]], str], value: str) -> dict[str, dict[str, Any]]:
    """{series: {day: value}}, largest series (by total) first."""
    found: dict[str, dict[str, Any]] = defaultdict(dict)
    for row in rows:
        found[series(row)][_day(row["day"])] = row[value]
    totals = {name: sum(float(v or 0) for v in points.values()) for name, points in found.items()}
    return {name: found[name] for name in sorted(found, key=lambda n: (-totals[n], n))}


# -- generic shapes ---------------------------------------------------------------------------


def bars_per_day(
    heading: Heading,
    rows: Rows,
    series: Callable[[dict[str, Any]], str],
    value: str,
    y_title: str,
    *,
    empty: str,
    stacked: bool = True,
) -> Chart:
    """One bar series per `series` value, days on x: stacked, or side by side."""
    if not rows:
        return _empty(heading, empty)
    days = _days(rows)
    figure = go.Figure()
    for name, points in _by_series(rows, series, value).items():
        figure.add_trace(go.Bar(name=name, x=days, y=[points.get(day, 0) for day in days]))
    return _finish(figure, heading, y_title, days=len(days), barmode="stack" if stacked else "group")


def percentile_lines(
    heading: Heading, rows: Rows, columns: Sequence[str], y_title: str, *, empty: str
) -> Chart:
    """p50, p90 and p99 lines over the days of `rows`; `columns` name the three values."""
    measured = [row for row in rows if any(row[column] is not None for column in columns)]
    if not measured:
        return _empty(heading, empty)
    ordered = sorted(measured, key=lambda row: _day(row["day"]))
    days = [_day(row["day"]) for row in ordered]
    figure = go.Figure()
    for column, (name, dash, colour) in zip(columns, PERCENTILES, strict=True):
        figure.add_trace(
            go.Scatter(
                name=name,
                x=days,
                y=[row[column] for row in ordered],
                mode="lines+markers",
                line={"dash": dash, "color": colour},
            )
        )
    return _finish(figure, heading, y_title, days=len(days))


def heatmap(
    heading: Heading,
    *,
    x: list[str],
    y: list[str],
    cells: dict[tuple[str, str], dict[str, Any]],
    value: str,
    text: Callable[[dict[str, Any]], str],
    hover: Callable[[dict[str, Any]], str],
    colorscale: str,
    colorbar: dict[str, Any],
    x_title: str,
    y_title: str,
    zmax: float | None = None,
    days: int = 0,
) -> Chart:
    """A labelled grid: one cell per (y, x) of `cells`, coloured by `value`, written with `text`."""
    grid = [[cells.get((row, column)) for column in x] for row in y]
    figure = go.Figure(
        go.Heatmap(
            z=[[None if cell is None else cell[value] for cell in line] for line in grid],
            x=x,
            y=y,
            text=[["" if cell is None else text(cell) for cell in line] for line in grid],
            texttemplate="%{text}",
            customdata=[["" if cell is None else hover(cell) for cell in line] for line in grid],
            hovertemplate="%{y} · %{x}<br>%{customdata}<extra></extra>",
            colorscale=colorscale,
            zmin=0,
            zmax=zmax,
            colorbar=colorbar,
            xgap=2,
            ygap=2,
        )
    )
    chart = _finish(
        figure,
        heading,
        y_title,
        x_title=x_title,
        days=days,
        hovermode="closest",
        height=max(HEIGHT, 30 * len(y) + 190),
    )
    figure.update_yaxes(rangemode="normal", autorange="reversed")
    if x_title != DAY_AXIS:
        figure.update_xaxes(type="category")
    return chart


# -- the charts ---------------------------------------------------------------------------------


def component_latency_chart(rows: Rows) -> Chart:
    heading = Heading(
        "component-latency",
        "Latency",
        "Span latency by component",
        "p50, p90, p99 of span durations per day; TOOL:x and AGENT:x spans count as Tool and Agent",
        wide=True,
    )
    if not rows:
        return _empty(heading, "No spans in this window")
    present = {row["component"] for row in rows}
    components = [c for c in COMPONENT_ORDER if c in present] + sorted(present - set(COMPONENT_ORDER))
    cols = 3
    grid_rows = (len(components) + cols - 1) // cols
    figure = make_subplots(
        rows=grid_rows,
        cols=cols,
        subplot_titles=components,
        vertical_spacing=0.36 / grid_rows,
        horizontal_spacing=0.07,
    )
    for index, component in enumerate(components):
        mine = sorted((row for row in rows if row["component"] == component), key=lambda r: _day(r["day"]))
        for name, dash, colour in PERCENTILES:
            figure.add_trace(
                go.Scatter(
                    name=name,
                    legendgroup=name,
                    showlegend=index == 0,
                    x=[_day(row["day"]) for row in mine],
                    y=[row[f"{name}_seconds"] for row in mine],
                    mode="lines+markers",
                    line={"dash": dash, "color": colour},
                ),
                row=index // cols + 1,
                col=index % cols + 1,
            )
    chart = _finish(
        figure,
        heading,
        "seconds",
        days=len(_days(rows)),
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
        return _empty(heading, "No tool responses in this window")
    cells = {(str(row["display_name"]), _day(row["day"])): row for row in responded}
    highest = max(float(row["error_rate"]) for row in responded)
    days = _days(responded)
    return heatmap(
        heading,
        x=days,
        y=sorted({tool for tool, _ in cells}, key=str.lower),
        cells={(tool, day): row for (tool, day), row in cells.items()},
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
        return _empty(heading, "No LLM spans in this window")
    days = _days(rows)
    figure = go.Figure()
    for kind in ("input", "output"):
        for model, points in _by_series(rows, lambda row: str(row["model"]), f"{kind}_tokens").items():
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
    return _finish(figure, heading, "tokens", days=len(days), barmode="relative")


def first_chunk_chart(rows: Rows) -> Chart:
    heading = Heading(
        "first-chunk", "LLM usage", "LLM time to first chunk by model", "p50 (dotted) and p90 (solid) per day"
    )
    measured = [row for row in rows if row["first_chunk_p50_ms"] is not None]
    if not measured:
        return _empty(heading, "No LLM spans with a time to first chunk")
    days = _days(measured)
    figure = go.Figure()
    for percentile, dash in (("p50", "dot"), ("p90", "solid")):
        column = f"first_chunk_{percentile}_ms"
        for model, points in _by_series(measured, lambda row: str(row["model"]), column).items():
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
    return _finish(figure, heading, "milliseconds", days=len(days))


def transfer_chart(rows: Rows) -> Chart:
    heading = Heading(
        "agent-transfers",
        "Agents",
        "Agent transfers",
        "from agent (rows) → to agent (columns); the first transfer leaves the entry agent",
    )
    if not rows:
        return _empty(heading, "No agent transfers in this window")
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


def _run_labels(rows: Rows) -> dict[str, str]:
    """A short, unique x label per run, oldest first: app version and creation time (UTC)."""
    runs = sorted(
        {(row["create_time"], row["evaluation_run_name"], row["app_version_label"]) for row in rows}
    )
    labels: dict[str, str] = {}
    for create_time, name, version in runs:
        label = f"{version or '?'}<br>{create_time:%m-%d %H:%M}"
        if label in labels.values():
            label = f"{label}<br>{_short(name)}"
        labels[name] = label
    return labels


def pass_rate_chart(app: str, rows: Rows) -> Chart:
    heading = Heading(
        f"evaluation-pass-rate-{_short(app)}",
        "Evaluations",
        f"{_short(app)}: evaluation pass rate per run",
        "passed / results per evaluation in each completed run, oldest run left; errors count as failures",
        wide=True,
    )
    labels = _run_labels(rows)
    return heatmap(
        heading,
        x=list(labels.values()),
        y=sorted({str(row["evaluation_label"]) for row in rows}),
        cells={(str(row["evaluation_label"]), labels[row["evaluation_run_name"]]): row for row in rows},
        value="pass_rate",
        text=lambda row: "" if row["pass_rate"] is None else f"{row['pass_rate']:.0%}",
        hover=lambda row: (
            f"{row['passed']} passed, {row['failed']} failed, {row['errors']} errors"
            f" · {row['run_display_name'] or _short(row['evaluation_run_name'])}"
        ),
        colorscale="RdYlGn",
        colorbar={"title": {"text": "pass rate"}, "tickformat": ".0%"},
        x_title="completed run: app version, created (UTC)",
        y_title="evaluation",
        zmax=1.0,
    )


def evaluation_latency_chart(app: str, rows: Rows) -> Chart:
    heading = Heading(
        f"evaluation-latency-{_short(app)}",
        "Evaluations",
        f"{_short(app)}: evaluation latency per run",
        "p90 seconds of each tool, model, guardrail and callback in each completed run, oldest run left",
        wide=True,
    )
    labels = _run_labels(rows)
    kinds = [(kind, title) for kind, title in LATENCY_KINDS if any(row["kind"] == kind for row in rows)]
    cols = 2 if len(kinds) > 1 else 1
    grid_rows = (len(kinds) + cols - 1) // cols
    figure = make_subplots(
        rows=grid_rows,
        cols=cols,
        subplot_titles=[title for _, title in kinds],
        horizontal_spacing=0.08,
        vertical_spacing=0.32 / grid_rows,
    )
    for index, (kind, _) in enumerate(kinds):
        position = {"row": index // cols + 1, "col": index % cols + 1}
        series: dict[str, Rows] = defaultdict(list)
        for row in rows:
            if row["kind"] == kind:
                series[str(row["label"])].append(row)
        for name in sorted(series, key=str.lower):
            points = sorted(series[name], key=lambda r: (r["create_time"], r["evaluation_run_name"]))
            figure.add_trace(
                go.Scatter(
                    name=name,
                    legendgroup=kind,
                    legendgrouptitle={"text": dict(LATENCY_KINDS)[kind]},
                    x=[labels[row["evaluation_run_name"]] for row in points],
                    y=[row["p90_seconds"] for row in points],
                    mode="lines+markers",
                    customdata=[
                        [row["p50_seconds"], row["p99_seconds"], row["call_count"]] for row in points
                    ],
                    hovertemplate="p90 %{y:.3f} s (p50 %{customdata[0]:.3f}, p99 %{customdata[1]:.3f},"
                    " %{customdata[2]} calls)<extra>%{fullData.name}</extra>",
                ),
                **position,
            )
        figure.update_xaxes(
            type="category",
            categoryorder="array",
            categoryarray=list(labels.values()),
            tickangle=0,
            **position,
        )
        figure.update_yaxes(title_text="p90 seconds", **position)
    chart = _finish(
        figure,
        heading,
        "p90 seconds",
        x_title="",
        hovermode="closest",
        height=330 * grid_rows + 130,
        legend={"orientation": "v", "x": 1.02, "y": 1, "yanchor": "top", "groupclick": "toggleitem"},
    )
    figure.update_yaxes(rangemode="tozero")
    return chart


def evaluation_charts(data: ReportData) -> list[Chart]:
    """A pass-rate chart and a latency chart per app with completed runs."""
    apps = sorted(
        {row["app"] for row in data.evaluation_pass_rates} | {row["app"] for row in data.evaluation_latency}
    )
    if not apps:
        heading = Heading(
            "evaluation-pass-rate",
            "Evaluations",
            "Evaluation pass rate per run",
            "completed runs only",
            wide=True,
        )
        return [_empty(heading, "No completed evaluation runs in this window")]
    charts = []
    for app in apps:
        pass_rates = [row for row in data.evaluation_pass_rates if row["app"] == app]
        latencies = [row for row in data.evaluation_latency if row["app"] == app]
        if pass_rates:
            charts.append(pass_rate_chart(app, pass_rates))
        if latencies:
            charts.append(evaluation_latency_chart(app, latencies))
    return charts


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
                (lambda row: _short(row["value"])) if split == "app" else (lambda row: str(row["value"])),
                "conversations",
                "conversations",
                empty="No conversations in this window",
                stacked=split != "input_type",
            )
        )
    return charts


def build_charts(data: ReportData) -> list[Chart]:
    """Every chart of the page, in page order."""
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


def sections(charts: Iterable[Chart]) -> dict[str, list[Chart]]:
    """Charts grouped by section, sections in order of first appearance."""
    grouped: dict[str, list[Chart]] = {}
    for chart in charts:
        grouped.setdefault(chart.section, []).append(chart)
    return grouped
