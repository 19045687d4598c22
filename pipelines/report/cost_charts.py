"""The dashboard's cost charts and the anomaly markers on its trend charts.

Cost is drawn for the priced models only: a model without a price is named on the chart with
its calls, never drawn as zero. A day that `metric_anomalies` flags for a chart's metric gets a
dotted line with the metric, the app and the robust z-score."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import plotly.graph_objects as go

from pipelines.report.data import Rows
from pipelines.report.figures import Chart, Spec, add_note, bars_per_day, days_of, finish, short_name

ANOMALY_METRICS = {
    "volume-source": "conversations",
    "volume-channel_type": "conversations",
    "volume-language": "conversations",
    "volume-app": "conversations",
    "turn-duration": "turn_p90_seconds",
    "token-usage": "tokens",
    "llm-cost": "cost_usd",
}
"""The metric of metric_anomalies each trend chart draws (by the chart's id)."""


def cost_chart(spec: Spec, rows: Rows) -> Chart:
    """The priced models' cost stacked per day; the unpriced ones named with their calls."""
    priced = [row for row in rows if row["cost_usd"] is not None]
    calls: dict[str, int] = defaultdict(int)
    for row in rows:
        for model in (row["unpriced_models"] or "").split(", "):
            if model:
                calls[model] += row["unpriced_calls"] or 0
    chart = bars_per_day(
        spec, priced, series=lambda row: str(row["subject"]), value="cost_usd", y_title="USD"
    )
    if calls:
        named = ", ".join(f"{model} ({count:,} calls)" for model, count in sorted(calls.items()))
        add_note(chart.figure, f"not costed, no price in model_prices: {named}", colour="#9a6700")
    return chart


def efficiency_chart(spec: Spec, rows: Rows) -> Chart:
    """Tokens per turn, and per conversation that ended without an error, a line each per app."""
    days = days_of(rows)
    figure = go.Figure()
    several = len({row["app"] for row in rows}) > 1
    for column, dash in (("tokens_per_turn", "solid"), ("tokens_per_clean_conversation", "dot")):
        by_app: dict[str, dict[str, Any]] = defaultdict(dict)
        for row in rows:
            by_app[short_name(row["app"])][str(row["day"])] = row[column]
        for app, points in by_app.items():
            label = column.replace("_", " ").replace("tokens per ", "per ")
            figure.add_trace(
                go.Scatter(
                    name=f"{app} · {label}" if several else label,
                    x=days,
                    y=[points.get(day) for day in days],
                    mode="lines+markers",
                    line={"dash": dash},
                )
            )
    return finish(figure, spec, "tokens", days=len(days))


def mark_anomalies(chart: Chart, anomalies: Rows) -> None:
    """A dotted line on each day the chart's metric was anomalous, with the app and z."""
    metric = ANOMALY_METRICS.get(chart.spec.id)
    if metric is None or not chart.has_data:
        return
    for row in anomalies:
        if row["metric"] != metric:
            continue
        z = "z n/a" if row["z"] is None else f"z={row['z']:+.1f}"
        chart.figure.add_vline(
            x=str(row["day"]),
            line={"dash": "dot", "color": "#cf222e", "width": 1.5},
            annotation={
                "text": f"anomaly: {short_name(row['app'])} {z}",
                "font": {"size": 10, "color": "#cf222e"},
            },
        )


COST_CHARTS = (
    Spec(
        "llm-cost",
        "Cost",
        "LLM cost per day by model",
        "input and output tokens at the prices of model_prices (CES_MODEL_PRICES), USD",
        "No LLM calls in this window",
        "daily_cost",
        cost_chart,
    ),
    Spec(
        "token-efficiency",
        "Cost",
        "Tokens per turn and per clean conversation",
        "tokens per turn (solid) and per conversation that ended without an erroring tool (dotted)",
        "No conversations in this window",
        "token_efficiency",
        efficiency_chart,
    ),
)
