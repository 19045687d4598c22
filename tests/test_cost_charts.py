"""The dashboard's cost chart draws the priced models' cost and names the unpriced ones (never a
zero bar), and a day metric_anomalies flags is marked on the charts of its metric."""

from __future__ import annotations

from datetime import date

from pipelines.report.cost_charts import COST_CHARTS, mark_anomalies
from pipelines.report.figures import Chart

APP = "projects/p/locations/l/apps/support"
DAY, NEXT = date(2026, 11, 1), date(2026, 11, 2)


def _cost(day: date, model: str, cost: float | None, calls: int) -> dict:
    unpriced = cost is None
    return {
        "day": day,
        "app": APP,
        "subject": model,
        "llm_calls": calls,
        "cost_usd": cost,
        "unpriced_calls": calls if unpriced else None,
        "unpriced_models": model if unpriced else None,
    }


def test_the_cost_chart_draws_priced_models_and_names_the_unpriced() -> None:
    spec = next(spec for spec in COST_CHARTS if spec.id == "llm-cost")
    rows = [
        _cost(DAY, "gemini-2.5-flash", 0.25, 10),
        _cost(NEXT, "gemini-2.5-flash", 0.5, 20),
        _cost(DAY, "gemini-2.5-pro", 1.5, 3),
        _cost(NEXT, "custom-model", None, 7),
    ]
    chart = spec.chart(rows)
    bars = {trace.name: dict(zip(trace.x, trace.y, strict=True)) for trace in chart.figure.data}
    assert bars == {
        "gemini-2.5-flash": {"2026-11-01": 0.25, "2026-11-02": 0.5},
        "gemini-2.5-pro": {"2026-11-01": 1.5, "2026-11-02": 0},
    }
    (note,) = chart.figure.layout.annotations
    assert note.text == "not costed, no price in model_prices: custom-model (7 calls)"


def test_an_anomalous_day_is_marked_on_the_charts_of_its_metric() -> None:
    cost = next(spec for spec in COST_CHARTS if spec.id == "llm-cost").chart([_cost(DAY, "m", 1.0, 1)])
    efficiency = next(spec for spec in COST_CHARTS if spec.id == "token-efficiency")
    anomalies = [
        {"day": NEXT, "app": APP, "metric": "cost_usd", "z": 6.2},
        {"day": DAY, "app": APP, "metric": "tool_error_rate", "z": None},
    ]
    mark_anomalies(cost, anomalies)
    (line,) = cost.figure.layout.shapes
    assert (line.x0, line.line.dash) == ("2026-11-02", "dot")
    assert [a.text for a in cost.figure.layout.annotations] == ["anomaly: support z=+6.2"]
    other = Chart(efficiency, cost.figure.__class__(), has_data=True)
    mark_anomalies(other, anomalies)  # the token-efficiency chart draws no flagged metric
    assert other.figure.layout.shapes == ()
