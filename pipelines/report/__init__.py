"""The dashboard: named queries → data → one self-contained HTML file (plotly, no network)."""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from pipelines.errors import UsageError
from pipelines.report.charts import QUERIES, build_charts
from pipelines.report.data import ReportData, apps_of, read_report_data
from pipelines.report.page import render_page
from pipelines.report.waterfalls import read_traces, traced_conversations
from pipelines.sqlfiles import sql_text
from pipelines.warehouse.duck import Warehouse

__all__ = ["ReportError", "ReportFile", "write_report"]

TITLE = "CES conversations and evaluations"


class ReportError(UsageError, RuntimeError):
    """The report cannot be written where it was asked for (the others a report can meet: no
    warehouse, a bad filter, are the warehouse's own `UsageError`s)."""


@dataclass(frozen=True)
class ReportFile:
    path: str
    charts: int
    charts_with_data: int
    size_bytes: int
    chart_ids: tuple[str, ...]


def _subtitle(warehouse_path: str, data: ReportData, params: Mapping[str, Any], left_out: int) -> str:
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    shown = apps_of(data)
    apps = ", ".join(app.rsplit("/", 1)[-1] for app in shown) or "none"
    if left_out:
        other = "ces-pipeline report --app draws any other"
        apps = f"the {len(shown)} busiest of {len(shown) + left_out} ({apps}; {other})"
    until = params.get("until")  # the first day left out
    last = str(until - timedelta(days=1)) if until else "the newest day with conversations"
    window = f"{params.get('since', 'the first day loaded')} to {last}"
    parts = [
        f"Warehouse <code>{html.escape(warehouse_path)}</code> · generated {generated}",
        f"Apps: {html.escape(apps)} · days: {html.escape(window)} · every day is a UTC date",
    ]
    if params.get("app"):
        parts.append(f"Filtered to app {html.escape(str(params['app']))}")
    return "<br>".join(parts)


def _default_since(conn: duckdb.DuckDBPyConnection, until: date | None) -> dict[str, date]:
    """`since` unless given: the named queries' default window (`window_start`), the 30 days up to
    the newest day with conversations before `until`, so the page costs a month's rollups however
    long the history; none on a warehouse without conversations."""
    found = conn.execute(sql_text("report/window_start.sql"), {"until": until or date.max}).fetchone()
    return {} if found is None else {"since": found[0]}


def write_report(warehouse: Warehouse, out_path: str, params: Mapping[str, Any] | None = None) -> ReportFile:
    """Read the warehouse read-only and write the dashboard to `out_path` atomically."""
    if Path(out_path).is_dir():
        raise ReportError(
            f"{out_path} is a directory: give the report's file name, e.g. {Path(out_path) / 'report.html'}"
        )
    params = dict(params or {})
    with warehouse.connect(read_only=True) as conn:
        if "since" not in params:
            params |= _default_since(conn, params.get("until"))
        data, left_out = read_report_data(conn, QUERIES, params, warehouse.scoped_parts_root)
        traced = traced_conversations(data)
        traces = read_traces(conn, traced, warehouse.scoped_parts_root)
    charts = build_charts(data, traced, traces, len(apps_of(data)) + left_out if left_out else 0)
    subtitle = _subtitle(warehouse.path, data, params, left_out)
    page = render_page(charts, data["evaluation_regressions"], title=TITLE, subtitle=subtitle)
    target = Path(out_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        partial.write_text(page, encoding="utf-8")
        os.replace(partial, target)
    except OSError as exc:
        raise ReportError(f"cannot write the report to {target}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return ReportFile(
        path=str(target),
        charts=len(charts),
        charts_with_data=sum(chart.has_data for chart in charts),
        size_bytes=target.stat().st_size,
        chart_ids=tuple(chart.spec.id for chart in charts),
    )
