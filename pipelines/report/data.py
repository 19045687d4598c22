"""What the dashboard shows, read through the same named queries `ces-pipeline query` runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import duckdb

from pipelines.warehouse.queries import named_query

VOLUME_SPLITS = ("source", "channel_type", "input_type", "language", "app")
"""The `by` values of `conversation_volume` charted, in page order."""

Rows = list[dict[str, Any]]
ReportData = dict[str, Rows]
"""The rows of each named query the dashboard reads, by its name (`conversation_volume by app`:
its rows with by=app)."""


def groups(rows: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], Any]) -> dict[Any, Rows]:
    """`rows` by their `key`, in the order keys first come."""
    found: dict[Any, Rows] = {}
    for row in rows:
        found.setdefault(key(row), []).append(row)
    return found


def apps_of(data: ReportData) -> list[str]:
    """The apps of the conversations."""
    return sorted({str(row["value"]) for row in data["conversation_volume by app"]})


def _rows(conn: duckdb.DuckDBPyConnection, query: str, params: Mapping[str, Any]) -> Rows:
    name, _, by = query.partition(" by ")
    named = named_query(name)
    accepted = {parameter.name for parameter in named.parameters}
    given = {key: value for key, value in params.items() if key in accepted} | ({"by": by} if by else {})
    columns, rows = named.execute(conn, given)
    return [dict(zip(columns, row, strict=True)) for row in rows]


def read_report_data(
    conn: duckdb.DuckDBPyConnection, queries: Iterable[str], params: Mapping[str, Any] | None = None
) -> ReportData:
    """Run `queries` (`NAME by X`: NAME with by=X); `params` (app, since, until) go to every query
    that takes them."""
    return {query: _rows(conn, query, params or {}) for query in sorted(queries)}
