"""The dashboard page: one HTML file, plotly.js once and each figure as plotly writes it: no fetch."""

from __future__ import annotations

import html
from importlib import resources
from itertools import groupby
from string import Template
from typing import Any

import plotly.io as pio
from plotly.offline import get_plotlyjs

from pipelines.report.data import Rows, groups
from pipelines.report.figures import Chart, short_name

STATUS_ORDER = ("regressed", "gone", "new", "improved", "unchanged")
"""Worst news first: a subject takes the worst status of its metrics."""
METRIC_NAMES = {"pass_rate": "pass rate", "p50_seconds": "p50", "p90_seconds": "p90", "p99_seconds": "p99"}
_WHITE = pio.templates["plotly_white"].to_plotly_json()
TEMPLATE = {
    "layout": _WHITE["layout"],
    "data": {kind: _WHITE["data"][kind] for kind in ("bar", "heatmap", "scatter")},
}
"""plotly_white, which every figure carries (plotly.js has no page-wide template), less the styles
of traces the dashboard never draws."""
TO_HTML = {
    "full_html": False,
    "include_plotlyjs": False,  # on the page once
    "config": {"displaylogo": False},
    "post_script": "chartDrawn()",
    "validate": False,  # validated as it was built
}


def _chart_html(chart: Chart) -> str:
    """The chart's card: plotly's own <div> and script (plotly.js is on the page once); once drawn,
    it calls chartDrawn(), which marks the page complete after the last one."""
    figure = chart.figure.to_dict()
    figure["layout"]["template"] = TEMPLATE
    plot = pio.to_html(figure, div_id=chart.spec.id, **TO_HTML)
    wide = " wide" if chart.spec.wide else ""
    return f'<div class="card{wide}" role="img" aria-label="{html.escape(chart.spec.title)}">{plot}</div>'


def _sections_html(charts: list[Chart]) -> str:
    return "\n".join(
        f'<h2>{html.escape(section)}</h2>\n<div class="grid">\n{"".join(map(_chart_html, members))}\n</div>'
        for section, members in groupby(charts, key=lambda chart: chart.spec.section)
    )


def _value(metric: str, value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.0%}" if metric == "pass_rate" else f"{value:.3f} s"


def _change(row: dict[str, Any]) -> str:
    metric = row["metric"]
    name = METRIC_NAMES.get(metric, metric)
    before, after = _value(metric, row["previous_value"]), _value(metric, row["latest_value"])
    if row["status"] == "new":
        return f"{name} {after} (only in the latest run)"
    if row["status"] == "gone":
        return f"{name} {before} (only in the previous run)"
    if row["change"] is None:
        return f"{name} {before} → {after}"
    if metric == "pass_rate":
        return f"{name} {before} → {after} ({row['change'] * 100:+.0f} pts)"
    relative = row["relative_change"]
    return f"{name} {before} → {after}" + (f" ({relative:+.0%})" if relative is not None else "")


def _details(changed: Rows) -> list[tuple[str, str]]:
    """(status, text) lines: one per changed metric, one in all for a subject new or gone."""
    ordered = sorted(changed, key=lambda row: row["metric"])
    statuses = {row["status"] for row in ordered}
    if statuses in ({"new"}, {"gone"}):
        status = statuses.pop()
        column = "latest_value" if status == "new" else "previous_value"
        values = ", ".join(
            f"{METRIC_NAMES.get(row['metric'], row['metric'])} {_value(row['metric'], row[column])}"
            for row in ordered
        )
        return [(status, f"only in the {'latest' if status == 'new' else 'previous'} run: {values}")]
    return [(row["status"], _change(row)) for row in ordered]


def regressions_html(rows: Rows) -> str:
    """Per app, its latest completed run against the one before: one line per subject that
    changed (an evaluation's pass rate, or a tool's, model's, guardrail's or callback's latency),
    worst news first; subjects with no change are only counted."""
    if not rows:
        return (
            '<p class="note">Nothing to compare: no app\'s newest completed evaluation run has an earlier '
            "completed run of the same evaluations (or dataset).</p>"
        )
    parts = []
    for app, members in sorted(groups(rows, lambda row: row["app"]).items()):
        first = members[0]
        previous = f"{short_name(first['previous_run'])} ({first['previous_version'] or '?'})"
        latest = f"{short_name(first['latest_run'])} ({first['latest_version'] or '?'})"
        parts.append(f"<h3>{html.escape(f'{short_name(app)}: {previous} → {latest}')}</h3>")
        subjects = groups(members, lambda row: (row["kind"], str(row["subject"])))
        lines = []
        for metrics in subjects.values():
            status = min((row["status"] for row in metrics), key=STATUS_ORDER.index)
            changed = [row for row in metrics if row["status"] != "unchanged"]
            if changed:
                lines.append((STATUS_ORDER.index(status), status, metrics[0], changed))
        lines.sort(key=lambda line: (line[0], line[2]["kind"], str(line[2]["label"]).lower()))
        if lines:
            parts.append(
                "<table><thead><tr><th>status</th><th>kind</th><th>subject</th>"
                "<th>what changed (previous → latest run)</th></tr></thead><tbody>"
            )
            for _, status, row, changed in lines:
                details = "<br>".join(
                    f'<span class="status-{state}">{html.escape(text)}</span>'
                    for state, text in _details(changed)
                )
                parts.append(
                    "<tr>"
                    f'<td class="status status-{html.escape(status)}">{html.escape(status)}</td>'
                    f"<td>{html.escape(str(row['kind']))}</td>"
                    f'<td title="{html.escape(str(row["subject"]))}">{html.escape(str(row["label"]))}</td>'
                    f"<td>{details}</td>"
                    "</tr>"
                )
            parts.append("</tbody></table>")
        parts.append(
            f'<p class="note">{len(lines)} of {len(subjects)} subjects changed: a pass rate that fell, or '
            "a latency that rose by more than 10 %, regressed. "
            "<code>ces-pipeline query evaluation_regressions</code> lists every metric.</p>"
        )
    return "\n".join(parts)


def render_page(charts: list[Chart], regressions: Rows, *, title: str, subtitle: str) -> str:
    template = Template(resources.files("pipelines.report").joinpath("template.html").read_text())
    return template.substitute(
        title=html.escape(title),
        subtitle=subtitle,
        plotly_js=get_plotlyjs(),
        charts=len(charts),
        sections=_sections_html(charts),
        regressions=regressions_html(regressions),
    )
