"""The dashboard's Plotly chart shapes; one without data still shows, saying so: the page keeps its shape."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from pipelines.report.data import Rows, groups

DAY_AXIS = "Day (UTC)"
HEIGHT = 390
PERCENTILES = (("p50", "dot", "#2ca02c"), ("p90", "solid", "#1f77b4"), ("p99", "dash", "#d62728"))
"""Percentile lines: name, dash style and colour, the same on every chart."""


Draw = Callable[["Spec", Rows], "Chart"]


@dataclass(frozen=True)
class Spec:
    """A chart declared: its id (the element plotly draws in), section, title and subtitle, what it
    says without data, and the named query whose rows `draw` draws (a shape below, with its
    arguments, or a function of its own)."""

    id: str
    section: str
    title: str
    subtitle: str = ""
    empty: str = ""
    query: str = ""
    draw: Draw | None = None
    wide: bool = False

    def format(self, **names: str) -> Spec:
        """This chart with its id and title's `{name}` fields filled in (an app's charts)."""
        return replace(self, id=self.id.format(**names), title=self.title.format(**names))

    def chart(self, rows: Rows) -> Chart:
        """The chart of `rows`, or, without any, its frame saying so."""
        assert self.draw is not None, self.id
        return self.draw(self, rows) if rows else empty_chart(self)


@dataclass(frozen=True)
class Chart:
    spec: Spec
    figure: go.Figure
    has_data: bool


def day_label(value: Any) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)


def days_of(rows: Rows) -> list[str]:
    return sorted({day_label(row["day"]) for row in rows})


def short_name(resource: Any) -> str:
    return str(resource).rsplit("/", 1)[-1]


def _frame(spec: Spec) -> dict[str, Any]:
    """The layout every chart shares: its title and subtitle, height and margins."""
    title: dict[str, Any] = {"text": spec.title, "x": 0.01, "xanchor": "left", "font": {"size": 16}}
    if spec.subtitle:
        title["subtitle"] = {"text": spec.subtitle, "font": {"size": 12, "color": "#57606a"}}
    margin = {"l": 70, "r": 20, "t": 86 if spec.subtitle else 60, "b": 60}
    return {"title": title, "height": HEIGHT, "margin": margin}


def finish(
    figure: go.Figure,
    spec: Spec,
    y_title: str,
    *,
    x_title: str = DAY_AXIS,
    days: int = 0,
    xaxes: dict[str, Any] | None = None,
    yaxes: dict[str, Any] | None = None,
    **layout: Any,
) -> Chart:
    """`figure` framed: the spec's title, a legend below, y from zero, days (UTC) on x unless
    `x_title` says otherwise; `layout`, `xaxes` and `yaxes` (every subplot's) update that."""
    legend = {"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0}
    figure.update_layout({**_frame(spec), "legend": legend, "hovermode": "x unified"}, **layout)
    if x_title == DAY_AXIS:
        daily = {"dtick": 86_400_000, "tick0": "2000-01-01"} if 0 < days <= 14 else {}
        xaxes = {
            "type": "date",
            "tickformat": "%Y-%m-%d",
            "hoverformat": "%Y-%m-%d (UTC)",
            **daily,
            **(xaxes or {}),
        }
    figure.update_xaxes({"title_text": x_title, **(xaxes or {})})
    figure.update_yaxes({"title_text": y_title, "rangemode": "tozero", **(yaxes or {})})
    return Chart(spec, figure, has_data=True)


def finish_rows(figure: go.Figure, spec: Spec, x_title: str, left: int, **layout: Any) -> Chart:
    """`finish` for horizontal bars: a row per item, the first on top, labels `left` pixels wide
    (`yaxes` adds to their axis)."""
    yaxes = {"autorange": "reversed", "rangemode": "normal", **layout.pop("yaxes", {})}
    layout |= {"hovermode": "closest", "margin": {"l": left, "r": 20, "t": 86, "b": 60}}
    return finish(figure, spec, "", x_title=x_title, yaxes=yaxes, **layout)


def add_note(figure: go.Figure, text: str, *, right: bool = False, colour: str = "#57606a") -> None:
    """A line of text just above the plot area, at its left or right end."""
    figure.add_annotation(
        text=text,
        xref="paper",
        yref="paper",
        x=1 if right else 0,
        y=1.02,
        showarrow=False,
        xanchor="right" if right else "left",
        font={"size": 11, "color": colour},
    )


def empty_chart(spec: Spec, message: str = "") -> Chart:
    """The chart's frame saying `message`, or what its spec says without data."""
    note = {"text": message or spec.empty, "showarrow": False, "x": 0.5, "y": 0.5, "font": {"size": 14}}
    hidden = {"visible": False}
    layout = {**_frame(spec), "annotations": [{**note, "xref": "paper", "yref": "paper"}]}
    return Chart(spec, go.Figure(layout={**layout, "xaxis": hidden, "yaxis": hidden}), has_data=False)


def subplot_grid(
    titles: list[str], cols: int, *, vertical: float, horizontal: float
) -> tuple[go.Figure, list[dict[str, int]]]:
    """A subplot per title, `cols` a row, and the row and col of each; `vertical` is shared."""
    rows = (len(titles) + cols - 1) // cols
    figure = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=titles,
        vertical_spacing=vertical / rows,
        horizontal_spacing=horizontal,
    )
    return figure, [{"row": index // cols + 1, "col": index % cols + 1} for index in range(len(titles))]


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
    spec: Spec,
    rows: Rows,
    series: Callable[[dict[str, Any]], str],
    value: str,
    y_title: str,
    *,
    stacked: bool = True,
) -> Chart:
    """One bar series per `series` value, days on x: stacked, or side by side."""
    days = days_of(rows)
    figure = go.Figure()
    for name, points in by_series(rows, series, value).items():
        figure.add_trace(go.Bar(name=name, x=days, y=[points.get(day, 0) for day in days]))
    return finish(figure, spec, y_title, days=len(days), barmode="stack" if stacked else "group")


APP_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def percentile_traces(
    rows: Rows, columns: Sequence[str], *, by: str | None = None, legend: bool = True
) -> list[go.Scatter]:
    """Lines of p50, p90 and p99 (`columns` name them, or the first of them) over the days of
    `rows`. The percentiles are those of each app and day (the rollups'), so the rows of several
    apps are lines of their own, as are those of each `by` value (a model): a series a colour and
    a percentile a dash, or, for one series, a percentile a colour."""
    several_apps = len({str(row.get("app")) for row in rows}) > 1

    def series(row: dict[str, Any]) -> str:
        parts = [short_name(row.get("app"))] if several_apps else []
        return " ".join(parts + ([str(row[by])] if by else []))

    by_label = groups(sorted(rows, key=lambda row: day_label(row["day"])), series)
    traces = []
    for index, label in enumerate(sorted(by_label)):
        ordered = by_label[label]
        colour = APP_COLOURS[index % len(APP_COLOURS)] if len(by_label) > 1 else None
        for column, (name, dash, percentile_colour) in zip(columns, PERCENTILES[: len(columns)], strict=True):
            traces.append(
                go.Scatter(
                    name=f"{label} {name}".strip(),
                    legendgroup=label or name,
                    showlegend=legend,
                    x=[day_label(row["day"]) for row in ordered],
                    y=[row[column] for row in ordered],
                    mode="lines+markers",
                    line={"dash": dash, "color": colour or percentile_colour},
                )
            )
    return traces


def percentile_lines(
    spec: Spec, rows: Rows, column: str, y_title: str, *, by: str | None = None, percentiles: int = 3
) -> Chart:
    """p50, p90 and p99 (the first `percentiles` of them) of `column` ("turns_{}": turns_p50, ...)
    over the days of `rows`, drawn by `percentile_traces`."""
    columns = [column.format(name) for name, _, _ in PERCENTILES[:percentiles]]
    measured = [row for row in rows if any(row[column] is not None for column in columns)]
    if not measured:
        return empty_chart(spec)
    figure = go.Figure(percentile_traces(measured, columns, by=by))
    return finish(figure, spec, y_title, days=len(days_of(measured)))


def heatmap(
    spec: Spec,
    rows: Rows,
    *,
    x: str,
    y: str,
    z: str,
    text: str,
    hover: str,
    colours: tuple[str, str, str],
    x_title: str,
    y_title: str,
    columns: list[str] | None = None,
    zmax: float | None = None,
) -> Chart:
    """A labelled grid: a cell per row where its `x` and `y` values meet, coloured by its `z`,
    written with `text` and hovered with `hover` (formats of the row; no text where `z` is None).
    The columns are in the order of `columns` (or sorted), the lines sorted; `colours`: the colour
    scale, its bar's title and tick format; the scale tops at `zmax` or at a cell above it."""
    cells = {(day_label(row[y]), day_label(row[x])): row for row in rows}
    columns = columns or sorted({column for _, column in cells})
    lines = sorted({line for line, _ in cells}, key=str.lower)
    grid = [[cells.get((line, column)) for column in columns] for line in lines]
    scale, title, tickformat = colours
    highest = max((float(row[z]) for row in rows if row[z] is not None), default=0.0)
    figure = go.Figure(
        go.Heatmap(
            z=[[None if cell is None else cell[z] for cell in line] for line in grid],
            x=columns,
            y=lines,
            text=[
                ["" if cell is None or cell[z] is None else text.format(**cell) for cell in line]
                for line in grid
            ],
            texttemplate="%{text}",
            customdata=[["" if cell is None else hover.format(**cell) for cell in line] for line in grid],
            hovertemplate="%{y} · %{x}<br>%{customdata}<extra></extra>",
            colorscale=scale,
            zmin=0,
            zmax=None if zmax is None else max(zmax, highest),
            colorbar={"title": {"text": title}, "tickformat": tickformat},
            xgap=2,
            ygap=2,
        )
    )
    return finish(
        figure,
        spec,
        y_title,
        x_title=x_title,
        days=len(columns),
        xaxes={} if x_title == DAY_AXIS else {"type": "category"},
        yaxes={"rangemode": "normal", "autorange": "reversed"},
        hovermode="closest",
        height=max(HEIGHT, 30 * len(lines) + 190),
    )
