"""Data checks on the warehouse, as plain functions over `sql/checks/*.sql`.

Each check returns how many rows fail and a small sample, so the Dagster asset checks can
show the figures and the offenders, and tests can call them directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
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


def _outcome(conn: duckdb.DuckDBPyConnection, text: str) -> CheckOutcome:
    failures, sample = conn.execute(text).fetchone()
    return CheckOutcome(int(failures), list(sample or []))


def duplicate_keys(conn: duckdb.DuckDBPyConnection, spec: TableSpec) -> CheckOutcome:
    """Keys of `spec` that occur more than once."""
    return _outcome(
        conn, sql_text("checks/duplicate_keys.sql").format(table=spec.name, key=", ".join(spec.key))
    )


def orphan_spans(conn: duckdb.DuckDBPyConnection) -> CheckOutcome:
    return _outcome(conn, sql_text("checks/orphan_spans.sql"))


def negative_durations(conn: duckdb.DuckDBPyConnection) -> CheckOutcome:
    return _outcome(conn, sql_text("checks/negative_durations.sql"))


def turn_count_mismatches(conn: duckdb.DuckDBPyConnection) -> CheckOutcome:
    return _outcome(conn, sql_text("checks/turn_count_mismatches.sql"))


@dataclass(frozen=True)
class Freshness:
    newest_start: datetime | None
    conversations: int

    def age_hours(self, now: datetime | None = None) -> float | None:
        if self.newest_start is None:
            return None
        return ((now or datetime.now(UTC)) - self.newest_start).total_seconds() / 3600


def newest_conversation(conn: duckdb.DuckDBPyConnection) -> Freshness:
    newest, count = conn.execute(sql_text("checks/newest_conversation.sql")).fetchone()
    return Freshness(newest, int(count))
