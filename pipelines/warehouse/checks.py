"""Checks (`sql/checks/`): conversations in a run's partitions (cost follows the run), evaluations per app."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import duckdb

from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import TableSpec


@dataclass(frozen=True)
class CheckOutcome:
    """`failures` rows broke the rule; `sample` shows up to ten of them."""

    failures: int
    sample: list[Any]

    @property
    def passed(self) -> bool:
        return self.failures == 0


def scope_partitions(
    conn: duckdb.DuckDBPyConnection, apps: Sequence[str], first: date, last: date
) -> dict[str, date]:
    """Scope the conversation checks that follow to these apps and days (both ends included); the
    parameters to run them with: their days, so that they read those days' parts alone."""
    conn.execute(sql_text("checks/partition_scope.sql"), {"apps": list(apps), "first": first, "last": last})
    return {"first": first, "last": last}


def run_check(
    conn: duckdb.DuckDBPyConnection,
    name: str,
    params: dict[str, Any] | None = None,
    spec: TableSpec | None = None,
) -> CheckOutcome:
    """The outcome of `sql/checks/NAME.sql`; `spec`: the table whose key it checks."""
    text = sql_text(f"checks/{name}.sql")
    if spec is not None:
        text = text.format(table=spec.name, key=", ".join(spec.key))
    failures, sample = conn.execute(text, params or {}).fetchone()
    return CheckOutcome(int(failures), list(sample or []))


@dataclass(frozen=True)
class Freshness:
    newest_start: datetime | None
    conversations: int

    def age_hours(self, now: datetime | None = None) -> float | None:
        if self.newest_start is None:
            return None
        return ((now or datetime.now(UTC)) - self.newest_start).total_seconds() / 3600


def newest_conversation(conn: duckdb.DuckDBPyConnection, app: str) -> Freshness:
    """The app's newest start, looked for on its newest day only (a start's day is its partition)."""
    day, count = conn.execute(sql_text("checks/newest_day.sql"), {"app": app}).fetchone()
    if day is None:
        return Freshness(None, 0)
    (newest,) = conn.execute(sql_text("checks/newest_conversation.sql"), {"app": app, "day": day}).fetchone()
    return Freshness(newest, int(count))
