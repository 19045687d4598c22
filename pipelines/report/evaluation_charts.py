"""The dashboard's evaluation charts: per app, pass rate and latency across completed runs, how long
runs took, score distributions per metric and app version, and the newest run's failures with their
turns' latency."""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from pipelines.report.data import ReportData, Rows, groups
from pipelines.report.figures import (
    Chart,
    Draw,
    Spec,
    empty_chart,
    finish,
    finish_rows,
    heatmap,
    short_name,
    subplot_grid,
)

LATENCY_KINDS = {"tool": "Tools", "llm_call": "Models", "guardrail": "Guardrails", "callback": "Callbacks"}


def _run_labels(rows: Rows) -> dict[str, str]:
    """A short, unique x label per run, oldest first: app version and creation time (UTC)."""
    runs = sorted(
        {(row["create_time"], row["evaluation_run_name"], row["app_version_label"]) for row in rows}
    )
    labels: dict[str, str] = {}
    for create_time, name, version in runs:
        label = f"{version or '?'}<br>{create_time:%m-%d %H:%M}"
        labels[name] = f"{label}<br>{short_name(name)}" if label in labels.values() else label
    return labels


def _run_name(row: dict[str, Any]) -> str:
    return row["run_display_name"] or short_name(row["evaluation_run_name"])


def pass_rate_chart(spec: Spec, rows: Rows) -> Chart:
    labels = _run_labels(rows)
    return heatmap(
        spec,
        [{**row, "run": labels[row["evaluation_run_name"]], "shown": _run_name(row)} for row in rows],
        x="run",
        y="evaluation_label",
        z="pass_rate",
        text="{pass_rate:.0%}",
        hover="{passed} passed, {failed} failed, {errors} errors · {shown}",
        colours=("RdYlGn", "pass rate", ".0%"),
        x_title="completed run: app version, created (UTC)",
        y_title="evaluation",
        columns=list(labels.values()),
        zmax=1.0,
    )


def evaluation_latency_chart(spec: Spec, rows: Rows) -> Chart:
    """p90 latency per run of each tool, model, guardrail and callback, a kind a subplot."""
    labels = _run_labels(rows)
    kinds = {kind: title for kind, title in LATENCY_KINDS.items() if any(row["kind"] == kind for row in rows)}
    figure, positions = subplot_grid(
        list(kinds.values()), 2 if len(kinds) > 1 else 1, vertical=0.32, horizontal=0.08
    )
    runs = {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": list(labels.values()),
        "tickangle": 0,
    }
    for (kind, title), position in zip(kinds.items(), positions, strict=True):
        series = groups((row for row in rows if row["kind"] == kind), lambda row: str(row["label"]))
        for name in sorted(series, key=str.lower):
            points = sorted(series[name], key=lambda r: (r["create_time"], r["evaluation_run_name"]))
            trace = go.Scatter(
                name=name,
                legendgroup=kind,
                legendgrouptitle={"text": title},
                x=[labels[row["evaluation_run_name"]] for row in points],
                y=[row["p90_seconds"] for row in points],
                mode="lines+markers",
                customdata=[[row["p50_seconds"], row["p99_seconds"], row["call_count"]] for row in points],
                hovertemplate="p90 %{y:.3f} s (p50 %{customdata[0]:.3f}, p99 %{customdata[1]:.3f},"
                " %{customdata[2]} calls)<extra>%{fullData.name}</extra>",
            )
            figure.add_trace(trace, **position)
        figure.update_xaxes(runs, **position)
    return finish(
        figure,
        spec,
        "p90 seconds",
        x_title="",
        hovermode="closest",
        height=330 * positions[-1]["row"] + 130,
        legend={"orientation": "v", "x": 1.02, "y": 1, "yanchor": "top", "groupclick": "toggleitem"},
    )


def score_distribution_chart(spec: Spec, rows: Rows) -> Chart:
    figure = go.Figure()
    for version, points in groups(rows, lambda row: str(row["app_version_label"])).items():  # oldest first
        figure.add_trace(
            go.Box(
                name=version,
                x=[row["metric"] for row in points],
                y=[row["score"] for row in points],
                boxpoints="outliers",
                hovertemplate="%{x}: %{y:.3g}<extra>" + version + "</extra>",
            )
        )
    legend = {"title": {"text": "app version"}}
    return finish(
        figure, spec, "score", x_title="metric", hovermode="closest", boxmode="group", legend=legend
    )


def failure_latency_chart(spec: Spec, rows: Rows) -> Chart:
    timed = [row for row in rows if row["turn_latency_seconds"] is not None]
    if not timed:
        said = f"{len(rows)} failures in the newest completed run, none of a golden turn with a latency"
        return empty_chart(spec, f"{said} (ces-pipeline query evaluation_failures lists them)")
    labels = [_linked(row) for row in timed]
    slowest = [min(row["slowest_span_seconds"] or 0.0, row["turn_latency_seconds"]) for row in timed]
    rest = [row["turn_latency_seconds"] - span for row, span in zip(timed, slowest, strict=True)]
    hover = [
        f"{row['explanation'] or row['failure']}<br>slowest span: {row['slowest_span'] or '?'}"
        f"<br>erroring tool: {short_name(row['erroring_tool']) if row['erroring_tool'] else 'none'}"
        for row in timed
    ]
    figure = go.Figure(
        [
            go.Bar(name=name, y=labels, x=seconds, orientation="h", customdata=hover)
            for name, seconds in (("slowest span", slowest), ("rest of the turn", rest))
        ]
    )
    figure.update_traces(hovertemplate="%{x:.2f} s<br>%{customdata}<extra>%{fullData.name}</extra>")
    return finish_rows(figure, spec, "seconds", 320, height=max(340, 120 + 28 * len(timed)), barmode="stack")


def _linked(row: dict[str, Any]) -> str:
    """A failure's label; a link to its conversation's waterfall where the page draws one."""
    label = html.escape(
        f"{short_name(row['evaluation_name'])} · {row['failure']} · turn {row['turn_index']}"
        f" · {short_name(row['evaluation_result_name'])}"
    )
    anchor = row.get("trace_anchor")
    return f'<a href="#{anchor}">{label}</a>' if anchor else label


RUN_STATE_COLORS = {"COMPLETED": "#2ca02c", "ERROR": "#d62728", "CANCELLED": "#7f7f7f"}


def run_duration_chart(spec: Spec, rows: Rows) -> Chart:
    """Minutes from each final run's creation to its end, by when it was created, per final state."""
    figure = go.Figure()
    for state in sorted({str(row["state"]) for row in rows}):
        points = sorted((row for row in rows if row["state"] == state), key=lambda r: r["create_time"])
        figure.add_trace(
            go.Scatter(
                name=state,
                x=[row["create_time"] for row in points],
                y=[row["run_seconds"] / 60 for row in points],
                mode="lines+markers",
                marker={"color": RUN_STATE_COLORS.get(state)},
                line={"color": RUN_STATE_COLORS.get(state)},
                customdata=[
                    [_run_name(row), row["app_version_label"] or "?", row["results"]] for row in points
                ],
                hovertemplate="%{y:.1f} min · %{customdata[0]} (%{customdata[1]}, %{customdata[2]} results)"
                "<extra>%{fullData.name}</extra>",
            )
        )
    xaxes = {"type": "date", "hoverformat": "%Y-%m-%d %H:%M (UTC)"}
    return finish(figure, spec, "minutes", x_title="run created (UTC)", xaxes=xaxes, hovermode="closest")


def _per_app(kind: str, title: str, subtitle: str, query: str, draw: Draw, empty: str = "") -> Spec:
    """An app's evaluation chart, as wide as the page; format(app=...) names the app."""
    return Spec(
        f"evaluation-{kind}-{{app}}", "Evaluations", f"{{app}}: {title}", subtitle, empty, query, draw, True
    )


EVALUATION_CHARTS = (
    _per_app(
        "pass-rate",
        "evaluation pass rate per run",
        "passed / results per evaluation in each completed run, oldest run left; errors count as failures",
        "evaluation_pass_rates",
        pass_rate_chart,
    ),
    _per_app(
        "latency",
        "evaluation latency per run",
        "p90 seconds of each tool, model, guardrail and callback in each completed run, oldest run left",
        "evaluation_latency",
        evaluation_latency_chart,
    ),
    _per_app(
        "run-duration",
        "evaluation run duration",
        "minutes from a final run's creation to its end (its operation's create and end times)",
        "evaluation_run_durations",
        run_duration_chart,
    ),
    _per_app(
        "scores",
        "score distributions per metric and app version",
        "every score of completed runs' results; higher is better, but hallucination (1: hallucinated)",
        "evaluation_score_distribution",
        score_distribution_chart,
    ),
    _per_app(
        "failures",
        "failures of the newest completed run and their turns' latency",
        "per failing expectation or score of a golden turn: its slowest span and the rest of the turn "
        "(hover: why it failed, the erroring tool; a label links to its conversation's trace below)",
        "evaluation_failures",
        failure_latency_chart,
        empty="No failure in the newest completed run",
    ),
)
"""An app's evaluation charts, those it has rows for (the failures' whenever it has scores)."""
NO_RUNS = Spec(
    "evaluation-pass-rate",
    "Evaluations",
    "Evaluation pass rate per run",
    "completed runs only",
    "No completed evaluation runs in this window",
    wide=True,
)


def evaluation_charts(data: ReportData) -> list[Chart]:
    """Per app with completed evaluation runs, in its name's order: its EVALUATION_CHARTS."""
    runs = ("evaluation_pass_rates", "evaluation_latency", "evaluation_run_durations")
    charts = []
    for app in sorted({row["app"] for query in runs for row in data[query]}):
        mine = {
            spec.query: [row for row in data[spec.query] if row["app"] == app] for spec in EVALUATION_CHARTS
        }
        for spec in EVALUATION_CHARTS:
            if mine[spec.query] or (
                spec.query == "evaluation_failures" and mine["evaluation_score_distribution"]
            ):
                charts.append(spec.format(app=short_name(app)).chart(mine[spec.query]))
    return charts or [empty_chart(NO_RUNS)]
