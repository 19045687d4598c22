"""The dashboard's Plotly chart shapes; one without data still shows, saying so: the page keeps its shape."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pipelines.report.data import Rows

DAY_AXIS = "Day (UTC)"
HEIGHT = 390
PERCENTILES = (("p50", "dot", "#2ca02c"), ("p90", "solid", "#1f77b4"), ("p99", "dash", "#d62728"))
"""Percentile lines: name, dash style and colour, the same on every chart."""


@dataclass(frozen=True)
class Heading:
    id: str
    section: str
    title: str
    subtitle: str = ""
    wide: bool = False


@dataclass(frozen=True)
class Chart:
    heading: Heading
    figure: go.Figure
    has_data: bool


def day_label(value: Any) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)


def days_of(rows: Rows) -> list[str]:
    return sorted({day_label(row["day"]) for row in rows})


def short_name(resource: Any) -> str:
    return str(resource).rsplit("/", 1)[-1]


def _frame(heading: Heading) -> dict[str, Any]:
    """The layout every chart shares: its title and subtitle, height and margins."""
    title: dict[str, Any] = {"text": heading.title, "x": 0.01, "xanchor": "left", "font": {"size": 16}}
    if heading.subtitle:
        title["subtitle"] = {"text": heading.subtitle, "font": {"size": 12, "color": "#57606a"}}
    margin = {"l": 70, "r": 20, "t": 86 if heading.subtitle else 60, "b": 60}
    return {"title": title, "height": HEIGHT, "margin": margin}


def finish(
    figure: go.Figure,
    heading: Heading,
    y_title: str,
    *,
    x_title: str = DAY_AXIS,
    days: int = 0,
    **layout: Any,
) -> Chart:
    figure.update_layout(
        **_frame(heading),
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


def empty_chart(heading: Heading, message: str) -> Chart:
    figure = go.Figure()
    figure.add_annotation(
        text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 14}
    )
    figure.update_layout(**_frame(heading), xaxis={"visible": False}, yaxis={"visible": False})
    return Chart(heading, figure, has_data=False)


def subplot_grid(
    titles: list[str], cols: int, *, vertical: float, horizontal: float
) -> tuple[go.Figure, int]:
    """A subplot per title, `cols` a row (i at row i // cols + 1), and the rows; `vertical` is shared."""
    rows = (len(titles) + cols - 1) // cols
    figure = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=titles,
        vertical_spacing=vertical / rows,
        horizontal_spacing=horizontal,
    )
    return figure, rows


def by_series(rows: Rows, series: Callable[[dict[str, Any]], str], value: str) -> dict[str, dict[str, Any]]:
    """{series: {day: value}}, largest series (by total) first; rows of one series and day (of
    several apps) add up."""
    found: dict[str, dict[str, Any]] = defaultdict(dict)
    for row in rows:
        points, day = found[series(row)], day_label(row["day"])
        points[day] = row[value] if day not in points else (points[day] or 0) + (row[value] or 0)
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
        return empty_chart(heading, empty)
    days = days_of(rows)
    figure = go.Figure()
    for name, points in by_series(rows, series, value).items():
        figure.add_trace(go.Bar(name=name, x=days, y=[points.get(day, 0) for day in days]))
    return finish(figure, heading, y_title, days=len(days), barmode="stack" if stacked else "group")


APP_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def percentile_traces(rows: Rows, columns: Sequence[str], *, legend: bool = True) -> list[go.Scatter]:
    """p50, p90 and p99 lines over the days of `rows` (`columns` name the three values). The
    percentiles are those of each app and day (the rollups'), so rows of several apps are drawn
    as lines of their own, an app a colour, a percentile a dash."""
    apps = sorted({str(row.get("app")) for row in rows})
    traces = []
    for index, app in enumerate(apps):
        ordered = sorted(
            (row for row in rows if str(row.get("app")) == app), key=lambda r: day_label(r["day"])
        )
        for column, (name, dash, colour) in zip(columns, PERCENTILES, strict=True):
            traces.append(
                go.Scatter(
                    name=name if len(apps) == 1 else f"{short_name(app)} {name}",
                    legendgroup=name if len(apps) == 1 else app,
                    showlegend=legend,
                    x=[day_label(row["day"]) for row in ordered],
                    y=[row[column] for row in ordered],
                    mode="lines+markers",
                    line={
                        "dash": dash,
                        "color": colour if len(apps) == 1 else APP_COLOURS[index % len(APP_COLOURS)],
                    },
                )
            )
    return traces


def percentile_lines(
    heading: Heading, rows: Rows, columns: Sequence[str], y_title: str, *, empty: str
) -> Chart:
    """p50, p90 and p99 lines over the days of `rows` (`percentile_traces`)."""
    measured = [row for row in rows if any(row[column] is not None for column in columns)]
    if not measured:
        return empty_chart(heading, empty)
    figure = go.Figure(percentile_traces(measured, columns))
    return finish(figure, heading, y_title, days=len(days_of(measured)))


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
    chart = finish(
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
