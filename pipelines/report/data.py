"""What the dashboard shows, read through the same named queries `ces-pipeline query` runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import duckdb

from pipelines.warehouse import part_views
from pipelines.warehouse.queries import asking_about, named_query

MAX_APPS = 10
"""The apps drawn unless `--app` picks one: the window's busiest. Each chart draws a line per app;
200 apps made 17,600 lines, 16 s and a page no one can read."""
VOLUME_SPLITS = ("source", "channel_type", "input_type", "language", "app")
"""The `by` values of `conversation_volume` charted, in page order."""
APP_VOLUME = "conversation_volume by app"
"""The query whose rows rank the apps (and list them: `apps_of`)."""

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
    return sorted({str(row["value"]) for row in data[APP_VOLUME]})


def _busiest(volume: Rows, limit: int) -> tuple[set[str] | None, int]:
    """The `limit` apps with most conversations in the window (None when there are no more), and
    how many apps are left out."""
    totals: Counter[str] = Counter()
    for row in volume:
        totals[str(row["value"])] += row["conversations"]
    ranked = sorted(totals, key=lambda app: (-totals[app], app))
    return (set(ranked[:limit]) if len(ranked) > limit else None), max(0, len(ranked) - limit)


def _rows(
    conn: duckdb.DuckDBPyConnection, query: str, params: Mapping[str, Any], apps: set[str] | None = None
) -> tuple[bool, Rows]:
    """Whether the rows of `query` name their app, and the rows (of the `apps` only, when given
    and they do), read a batch at a time so the apps left out never become Python objects."""
    name, _, by = query.partition(" by ")
    named = named_query(name)
    accepted = {parameter.name for parameter in named.parameters}
    given = {key: value for key, value in params.items() if key in accepted} | ({"by": by} if by else {})
    columns, cursor = named.start(conn, given)
    app = columns.index("app") if apps is not None and "app" in columns else None
    found: Rows = []
    while batch := cursor.fetchmany(10_000):
        found.extend(dict(zip(columns, row, strict=True)) for row in batch if app is None or row[app] in apps)
    return "app" in columns, found


def read_report_data(
    conn: duckdb.DuckDBPyConnection,
    queries: Iterable[str],
    params: Mapping[str, Any] | None = None,
    parts_root: Path | None = None,
) -> tuple[ReportData, int]:
    """Run `queries` (`NAME by X`: NAME with by=X); `params` (app, since, until) go to every query
    that takes them, and a page about one app reads its rollup parts alone (`parts_root`: a DuckDB
    file's, `asking_about`). Only the rows of the window's MAX_APPS busiest apps are kept: a query
    whose rows name their app reads those apps' rollup parts alone (at 2M conversations, 20 files
    a rollup instead of 400), one that sums every app (the window's totals) reads every app's. The
    data, and how many apps were left out."""
    params = params or {}
    asked = sorted(set(queries) - {APP_VOLUME})
    with asking_about(conn, parts_root, params.get("app")) as named:
        _, volume = _rows(conn, APP_VOLUME, params)
        apps, left_out = _busiest(volume, MAX_APPS)
        data = {APP_VOLUME: volume if apps is None else [row for row in volume if row["value"] in apps]}
        if apps is None or named:  # every app drawn, or the apps asked about read alone already
            return data | {query: _rows(conn, query, params, apps)[1] for query in asked}, left_out
    with part_views.reading_apps(conn, parts_root, sorted(apps)):
        found = {query: _rows(conn, query, params, apps) for query in asked}
    for query, (per_app, rows) in found.items():
        data[query] = rows if per_app else _rows(conn, query, params)[1]
    return data, left_out
