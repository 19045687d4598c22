"""Checks (`sql/checks/`): conversations in a run's partitions (cost follows the run), evaluations per app."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import TableSpec
from pipelines.warehouse import parts


@dataclass(frozen=True)
class CheckOutcome:
    """`failures` rows broke the rule; `sample` shows up to ten of them."""

    failures: int
    sample: list[Any]

    @property
    def passed(self) -> bool:
        return self.failures == 0

    def summary(self) -> str:
        """How many, and the first of them as `field value` pairs: a line a person can act on."""
        first = self.sample[0] if self.sample else None
        shown = ", ".join(f"{k} {v}" for k, v in first.items()) if isinstance(first, dict) else first
        return f"{self.failures} found" + (f", the first: {shown}" if shown is not None else "")


def scope_partitions(
    conn: duckdb.DuckDBPyConnection,
    apps: Sequence[str],
    first: date,
    last: date,
    parts_root: Path | None = None,
) -> dict[str, date]:
    """Scope the conversation checks that follow to these apps and days (both ends included); the
    parameters to run them with: their days, so that they read those days' parts alone.
    `parts_root` (a DuckDB file's parts): for the rest of the session the conversation tables are
    views of these partitions' parts and of each app's newest day (`newest_conversation` reads
    it), so a check binds a few files, not the history's list (0.2 s a check at 12,000)."""
    if parts_root is not None:
        days = [first + timedelta(days=offset) for offset in range((last - first).days + 1)]
        newest = [(app, day) for app in apps if (day := _loaded_days(conn, app)[1]) is not None]
        parts.install_views(conn, parts_root, only=[*((app, day) for app in apps for day in days), *newest])
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
    _, day, count = _loaded_days(conn, app)
    return Freshness(None if day is None else _newest_start_on(conn, app, day), int(count))


def loaded_span(
    conn: duckdb.DuckDBPyConnection, app: str, parts_root: Path | None = None
) -> tuple[datetime | None, datetime | None]:
    """From when to when the warehouse holds the app's conversations: its oldest day's start and
    its newest conversation's start, (None, None) with none (`parts_root`: a DuckDB file's parts,
    of which the app's newest day's alone are read)."""
    oldest, newest, _ = _loaded_days(conn, app)
    if newest is None:
        return None, None
    with parts.reading_only(conn, parts_root, [(app, newest)]):
        newest_start = _newest_start_on(conn, app, newest)
    return datetime.combine(oldest, datetime.min.time(), UTC), newest_start


def _newest_start_on(conn: duckdb.DuckDBPyConnection, app: str, day: date) -> datetime | None:
    return conn.execute(sql_text("checks/newest_conversation.sql"), {"app": app, "day": day}).fetchone()[0]


def _loaded_days(conn: duckdb.DuckDBPyConnection, app: str) -> tuple[date | None, date | None, int]:
    """The app's oldest and newest days with conversations and its number of conversations, from
    the rollup."""
    return conn.execute(sql_text("checks/loaded_days.sql"), {"app": app}).fetchone()
