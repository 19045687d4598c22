"""The dashboard's evaluation charts: per app, pass rate and latency across completed runs, how long
runs took, score distributions per metric and app version, and the newest run's failures with their
turns' latency."""

from __future__ import annotations

from collections import defaultdict

import plotly.graph_objects as go

from pipelines.report.data import ReportData, Rows
from pipelines.report.figures import Chart, Heading, empty_chart, finish, heatmap, short_name, subplot_grid

LATENCY_KINDS = (
    ("tool", "Tools"),
    ("llm_call", "Models"),
    ("guardrail", "Guardrails"),
    ("callback", "Callbacks"),
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
            label = f"{label}<br>{short_name(name)}"
        labels[name] = label
    return labels


def pass_rate_chart(app: str, rows: Rows) -> Chart:
    heading = Heading(
        f"evaluation-pass-rate-{short_name(app)}",
        "Evaluations",
        f"{short_name(app)}: evaluation pass rate per run",
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
            f" · {row['run_display_name'] or short_name(row['evaluation_run_name'])}"
        ),
        colorscale="RdYlGn",
        colorbar={"title": {"text": "pass rate"}, "tickformat": ".0%"},
        x_title="completed run: app version, created (UTC)",
        y_title="evaluation",
        zmax=1.0,
    )


def evaluation_latency_chart(app: str, rows: Rows) -> Chart:
    heading = Heading(
        f"evaluation-latency-{short_name(app)}",
        "Evaluations",
        f"{short_name(app)}: evaluation latency per run",
        "p90 seconds of each tool, model, guardrail and callback in each completed run, oldest run left",
        wide=True,
    )
    labels = _run_labels(rows)
    kinds = [(kind, title) for kind, title in LATENCY_KINDS if any(row["kind"] == kind for row in rows)]
    cols = 2 if len(kinds) > 1 else 1
    figure, grid_rows = subplot_grid([title for _, title in kinds], cols, vertical=0.32, horizontal=0.08)
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
    chart = finish(
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


def score_distribution_chart(app: str, rows: Rows) -> Chart:
    heading = Heading(
        f"evaluation-scores-{short_name(app)}",
        "Evaluations",
        f"{short_name(app)}: score distributions per metric and app version",
        "every score of completed runs' results; higher is better, but hallucination (1: hallucinated)",
        wide=True,
    )
    figure = go.Figure()
    versions = list(dict.fromkeys(str(row["app_version_label"]) for row in rows))  # oldest first
    for version in versions:
        points = [row for row in rows if str(row["app_version_label"]) == version]
        figure.add_trace(
            go.Box(
                name=version,
                x=[row["metric"] for row in points],
                y=[row["score"] for row in points],
                boxpoints="outliers",
                hovertemplate="%{x}: %{y:.3g}<extra>" + version + "</extra>",
            )
        )
    chart = finish(figure, heading, "score", x_title="metric", hovermode="closest", boxmode="group")
    figure.update_layout(legend={"title": {"text": "app version"}})
    return chart


def failure_latency_chart(app: str, rows: Rows) -> Chart:
    heading = Heading(
        f"evaluation-failures-{short_name(app)}",
        "Evaluations",
        f"{short_name(app)}: failures of the newest completed run and their turns' latency",
        "per failing expectation or score of a golden turn: its slowest span and the rest of the turn "
        "(hover: why it failed, the erroring tool)",
        wide=True,
    )
    timed = [row for row in rows if row["turn_latency_seconds"] is not None]
    if not timed and rows:
        said = f"{len(rows)} failures in the newest completed run, none of a golden turn with a latency"
        return empty_chart(heading, f"{said} (ces-pipeline query evaluation_failures lists them)")
    if not timed:
        return empty_chart(heading, "No failure in the newest completed run")
    labels = [
        f"{short_name(row['evaluation_name'])} · {row['failure']} · turn {row['turn_index']}"
        f" · {short_name(row['evaluation_result_name'])}"
        for row in timed
    ]
    slowest = [min(row["slowest_span_seconds"] or 0.0, row["turn_latency_seconds"]) for row in timed]
    hover = [
        f"{row['explanation'] or row['failure']}<br>slowest span: {row['slowest_span'] or '?'}"
        f"<br>erroring tool: {short_name(row['erroring_tool']) if row['erroring_tool'] else 'none'}"
        for row in timed
    ]
    figure = go.Figure(
        [
            go.Bar(name="slowest span", y=labels, x=slowest, orientation="h", customdata=hover),
            go.Bar(
                name="rest of the turn",
                y=labels,
                x=[row["turn_latency_seconds"] - span for row, span in zip(timed, slowest, strict=True)],
                orientation="h",
                customdata=hover,
            ),
        ]
    )
    figure.update_traces(hovertemplate="%{x:.2f} s<br>%{customdata}<extra>%{fullData.name}</extra>")
    chart = finish(
        figure,
        heading,
        "",
        x_title="seconds",
        hovermode="closest",
        barmode="stack",
        height=max(340, 120 + 28 * len(timed)),
        margin={"l": 320, "r": 20, "t": 86, "b": 60},
    )
    figure.update_yaxes(autorange="reversed", rangemode="normal")
    return chart


RUN_STATE_COLORS = {"COMPLETED": "#2ca02c", "ERROR": "#d62728", "CANCELLED": "#7f7f7f"}


def run_duration_chart(app: str, rows: Rows) -> Chart:
    """Minutes from each final run's creation to its end, by when it was created, per final state."""
    heading = Heading(
        f"evaluation-run-duration-{short_name(app)}",
        "Evaluations",
        f"{short_name(app)}: evaluation run duration",
        "minutes from a final run's creation to its end (its operation's create and end times)",
        wide=True,
    )
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
                    [
                        row["run_display_name"] or short_name(row["evaluation_run_name"]),
                        row["app_version_label"] or "?",
                        row["results"],
                    ]
                    for row in points
                ],
                hovertemplate="%{y:.1f} min · %{customdata[0]} (%{customdata[1]}, %{customdata[2]} results)"
                "<extra>%{fullData.name}</extra>",
            )
        )
    figure.update_xaxes(type="date", hoverformat="%Y-%m-%d %H:%M (UTC)")
    return finish(figure, heading, "minutes", x_title="run created (UTC)", hovermode="closest")


def evaluation_charts(data: ReportData) -> list[Chart]:
    """Per app with evaluation runs: pass rate, latency, run duration, scores and failures."""
    apps = sorted(
        {row["app"] for row in data.evaluation_pass_rates}
        | {row["app"] for row in data.evaluation_latency}
        | {row["app"] for row in data.evaluation_run_durations}
    )
    if not apps:
        heading = Heading(
            "evaluation-pass-rate",
            "Evaluations",
            "Evaluation pass rate per run",
            "completed runs only",
            wide=True,
        )
        return [empty_chart(heading, "No completed evaluation runs in this window")]
    charts = []
    for app in apps:
        pass_rates = [row for row in data.evaluation_pass_rates if row["app"] == app]
        latencies = [row for row in data.evaluation_latency if row["app"] == app]
        if pass_rates:
            charts.append(pass_rate_chart(app, pass_rates))
        if latencies:
            charts.append(evaluation_latency_chart(app, latencies))
        durations = [row for row in data.evaluation_run_durations if row["app"] == app]
        if durations:
            charts.append(run_duration_chart(app, durations))
        scores = [row for row in data.evaluation_score_distribution if row["app"] == app]
        if scores:
            charts.append(score_distribution_chart(app, scores))
        failures = [row for row in data.evaluation_failures if row["app"] == app]
        if scores or failures:
            charts.append(failure_latency_chart(app, failures))
    return charts
