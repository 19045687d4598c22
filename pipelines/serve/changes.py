"""What changed for an app over a range of days, against the same number of days before: its
anomalous days, every daily metric's mean then and now (volume, latency, errors, tokens, cost,
pass rate), the cost per model, and the regressions of its latest evaluation run. One answer
from the daily rollups and the views over them, so it costs the days asked for, not the history."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import duckdb

from pipelines.serve.lookups import rows
from pipelines.serve.reader import AnswerError
from pipelines.sqlfiles import sql_text
from pipelines.warehouse.queries import asking_about, named_query


def what_changed(
    conn: duckdb.DuckDBPyConnection, app: str, since: date, until: date, parts_root: Path | None = None
) -> dict[str, Any]:
    """The answer about one app, read from its rollup parts alone (`parts_root`: a DuckDB file's,
    `asking_about`)."""
    if until <= since:
        raise AnswerError(f"until ({until}) must be after since ({since})")
    with asking_about(conn, parts_root, app) as named:
        if len(named) > 1:
            raise AnswerError(
                f"app id {app!r} is ambiguous: give the full resource name ({', '.join(named)})"
            )
        return _changes(conn, named[0], since, until)


def _changes(conn: duckdb.DuckDBPyConnection, full: str, since: date, until: date) -> dict[str, Any]:
    before = since - (until - since)
    period = {"app": full, "since": since, "until": until, "before": before}
    metrics = rows(conn, sql_text("serve/metric_changes.sql"), period)
    for metric in metrics:
        current, previous = metric["current"], metric["previous"]
        metric["change"] = None if current is None or previous is None else current - previous
        metric["ratio"] = None if metric["change"] is None or not previous else current / previous
    regressed = {"app": full, "status": "regressed"}
    columns, regressions = named_query("evaluation_regressions").execute(conn, regressed)
    return {
        "app": full,
        "since": str(since),
        "until": str(until),
        "compared_with": {"since": str(before), "until": str(since)},
        "anomalies": rows(
            conn, sql_text("serve/period_anomalies.sql"), {"app": full, "since": since, "until": until}
        ),
        "metrics": metrics,
        "costs": rows(conn, sql_text("serve/period_costs.sql"), period),
        "evaluation_regressions": [dict(zip(columns, row, strict=True)) for row in regressions],
    }
