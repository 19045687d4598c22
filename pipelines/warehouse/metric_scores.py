"""The daily metrics' baselines (`daily_metric_scores`): each app's daily metrics, those the
dashboard draws, with the median and MAD of their 28 days before, which `metric_anomalies` scores.

Computed when asked, a baseline is a window over 29 days of every metric: over every app of the
2M-conversation bench (200 apps), 0.2 s of each anomaly question, its whole cost. A day's values
change only when its partition, its evaluation runs or the prices do, and its baselines then
change for the 28 days after it: so a load scores again its apps' days and the 28 after them
(`rescore`), in its transaction, and a change of prices or of the catalog's SQL scores every day
again (`ensure`). The threshold is applied when read: CES_ANOMALY_Z changes nothing stored."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta

import duckdb

from pipelines.sqlfiles import sql_text
from pipelines.warehouse import catalog
from pipelines.warehouse.transaction import transaction

SCORES = "daily_metric_scores"
BASELINE_DAYS = 28
"""The days before a day that its baseline reads (`sql/analysis/score_daily_metrics.sql`)."""
EVERY_DAY = (None, date(1970, 1, 1), date(9999, 12, 31))


def rescore(conn: duckdb.DuckDBPyConnection, partitions: Iterable[tuple[str, date]]) -> None:
    """Score again, inside the caller's transaction, the days of these (app, day) partitions and
    the `BASELINE_DAYS` after each, whose baselines they are part of."""
    spans: dict[str, tuple[date, date]] = {}
    for app, day in partitions:
        first, last = spans.get(app, (day, day))
        spans[app] = (min(first, day), max(last, day))
    ranges = [
        (app, first, last + timedelta(days=BASELINE_DAYS)) for app, (first, last) in sorted(spans.items())
    ]
    if ranges:
        _score(conn, ranges)


def ensure(conn: duckdb.DuckDBPyConnection, settings_changed: bool) -> None:
    """Score every day again when the prices or threshold were just written (`settings_changed`),
    or the scores were computed by other SQL than the catalog's now (a new release, a rollup
    computed again), in a transaction of its own."""
    wanted = catalog.definition(True)
    held = dict(conn.execute(sql_text("warehouse/rollup_definitions.sql")).fetchall()).get(SCORES)
    if held == wanted and not settings_changed:
        return
    with transaction(conn):
        _score(conn, [EVERY_DAY])
        conn.execute(sql_text("analysis/forget_scores_definition.sql"), {"rollup": SCORES})
        conn.execute(
            sql_text("warehouse/record_rollup_definition.sql"), {"rollup": SCORES, "definition": wanted}
        )


def _score(conn: duckdb.DuckDBPyConnection, ranges: list[tuple[str | None, date, date]]) -> None:
    conn.execute(sql_text("analysis/create_rescored_days.sql"))
    conn.executemany(
        sql_text("analysis/insert_rescored_days.sql"),
        [{"app": app, "first": first, "last": last} for app, first, last in ranges],
    )
    conn.execute(sql_text("analysis/delete_rescored_scores.sql"))
    conn.execute(sql_text("analysis/score_daily_metrics.sql"))
    conn.execute(sql_text("analysis/drop_rescored_days.sql"))
