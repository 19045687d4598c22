"""Data checks over `sql/checks/*.sql`: of conversations only in the partitions a run loaded (cost
follows the run, not the warehouse), of evaluations in one app's runs."""

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


def _outcome(
    conn: duckdb.DuckDBPyConnection, text: str, params: dict[str, Any] | None = None
) -> CheckOutcome:
    failures, sample = conn.execute(text, params or {}).fetchone()
    return CheckOutcome(int(failures), list(sample or []))


def scope_partitions(conn: duckdb.DuckDBPyConnection, apps: Sequence[str], first: date, last: date) -> None:
    """Scope the conversation checks that follow to these apps and days (both ends included)."""
    conn.execute(sql_text("checks/partition_scope.sql"), {"apps": list(apps), "first": first, "last": last})


def duplicate_keys(conn: duckdb.DuckDBPyConnection, spec: TableSpec) -> CheckOutcome:
    return _outcome(
        conn, sql_text("checks/duplicate_keys.sql").format(table=spec.name, key=", ".join(spec.key))
    )


def duplicate_run_keys(conn: duckdb.DuckDBPyConnection, spec: TableSpec, app: str) -> CheckOutcome:
    text = sql_text("checks/duplicate_run_keys.sql").format(table=spec.name, key=", ".join(spec.key))
    return _outcome(conn, text, {"app": app})


def orphan_spans(conn: duckdb.DuckDBPyConnection) -> CheckOutcome:
    return _outcome(conn, sql_text("checks/orphan_spans.sql"))


def negative_durations(conn: duckdb.DuckDBPyConnection) -> CheckOutcome:
    return _outcome(conn, sql_text("checks/negative_durations.sql"))


def negative_latencies(conn: duckdb.DuckDBPyConnection, app: str) -> CheckOutcome:
    return _outcome(conn, sql_text("checks/negative_latencies.sql"), {"app": app})


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


def newest_conversation(conn: duckdb.DuckDBPyConnection, app: str) -> Freshness:
    newest, count = conn.execute(sql_text("checks/newest_conversation.sql"), {"app": app}).fetchone()
    return Freshness(newest, int(count))
