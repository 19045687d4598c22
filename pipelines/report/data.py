"""What the dashboard shows, read through the same named queries `ces-pipeline query` runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb

from pipelines.warehouse.queries import named_query

VOLUME_SPLITS = ("source", "channel_type", "input_type", "language", "app")
"""The `by` values of `conversation_volume` charted, in page order."""

Rows = list[dict[str, Any]]


@dataclass
class ReportData:
    """The rows of each named query the dashboard reads, by the query's name."""

    volume: dict[str, Rows] = field(default_factory=dict)
    conversation_length: Rows = field(default_factory=list)
    component_latency: Rows = field(default_factory=list)
    turn_latency: Rows = field(default_factory=list)
    tool_error_trend: Rows = field(default_factory=list)
    token_usage: Rows = field(default_factory=list)
    agent_transfer_flows: Rows = field(default_factory=list)
    evaluation_pass_rates: Rows = field(default_factory=list)
    evaluation_latency: Rows = field(default_factory=list)
    evaluation_run_durations: Rows = field(default_factory=list)
    evaluation_regressions: Rows = field(default_factory=list)
    evaluation_score_distribution: Rows = field(default_factory=list)
    evaluation_failures: Rows = field(default_factory=list)
    apps: list[str] = field(default_factory=list)


def _rows(conn: duckdb.DuckDBPyConnection, name: str, params: Mapping[str, Any]) -> Rows:
    query = named_query(name)
    accepted = {parameter.name for parameter in query.parameters}
    columns, rows = query.execute(conn, {k: v for k, v in params.items() if k in accepted})
    return [dict(zip(columns, row, strict=True)) for row in rows]


def read_report_data(conn: duckdb.DuckDBPyConnection, params: Mapping[str, Any] | None = None) -> ReportData:
    """Run the report's queries; `params` (app, since, until) go to every query that takes them."""
    params = dict(params or {})
    data = ReportData()
    for split in VOLUME_SPLITS:
        data.volume[split] = _rows(conn, "conversation_volume", {**params, "by": split})
    data.apps = sorted({str(row["value"]) for row in data.volume["app"]})
    for query in dataclasses.fields(data):
        if query.name not in ("volume", "apps"):
            setattr(data, query.name, _rows(conn, query.name, params))
    return data
