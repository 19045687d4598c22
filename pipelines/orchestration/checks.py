"""Dagster asset checks on the warehouse tables. Blocking where bad data would spread."""

import os
from collections.abc import Callable

import dagster as dg
import duckdb

from pipelines.orchestration.resources import WarehouseResource
from pipelines.transform.schemas import ALL_TABLES, EVALUATION_RUN_SNAPSHOTS, REJECTS, TableSpec
from pipelines.warehouse import checks

FRESHNESS_HOURS = float(os.environ.get("CES_FRESHNESS_HOURS") or 48)
"""How old the newest conversation may be before the freshness check warns."""


def _result(outcome: checks.CheckOutcome, **extra: object) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=outcome.passed,
        metadata={"failures": outcome.failures, "sample": dg.MetadataValue.json(outcome.sample), **extra},
    )


def _with_connection(
    warehouse: WarehouseResource, check: Callable[[duckdb.DuckDBPyConnection], dg.AssetCheckResult]
):
    with warehouse.warehouse().connect(read_only=True) as conn:
        return check(conn)


def _unique_keys_check(spec: TableSpec) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=dg.AssetKey(["warehouse", spec.name]),
        name="unique_keys",
        blocking=True,
        description=f"No two rows of {spec.name} share the key ({', '.join(spec.key)}).",
    )
    def unique_keys(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _with_connection(warehouse, lambda conn: _result(checks.duplicate_keys(conn, spec)))

    return unique_keys


UNIQUE_KEY_CHECKS = [
    _unique_keys_check(spec) for spec in ALL_TABLES if spec not in (REJECTS, EVALUATION_RUN_SNAPSHOTS)
]


@dg.asset_check(
    asset=dg.AssetKey(["warehouse", "spans"]), blocking=True, description="Every span's parent exists."
)
def spans_have_parents(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _with_connection(warehouse, lambda conn: _result(checks.orphan_spans(conn)))


@dg.asset_check(
    asset=dg.AssetKey(["warehouse", "spans"]),
    blocking=True,
    description="No conversation, turn, span or latency percentile has a negative duration.",
)
def no_negative_durations(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _with_connection(warehouse, lambda conn: _result(checks.negative_durations(conn)))


@dg.asset_check(
    asset=dg.AssetKey(["warehouse", "turns"]),
    description="turn_count as reported by the API agrees with the turns loaded (warns on mismatch).",
)
def turn_counts_agree(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    def check(conn: duckdb.DuckDBPyConnection) -> dg.AssetCheckResult:
        outcome = checks.turn_count_mismatches(conn)
        return dg.AssetCheckResult(
            passed=outcome.passed,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"mismatches": outcome.failures, "sample": dg.MetadataValue.json(outcome.sample)},
        )

    return _with_connection(warehouse, check)


@dg.asset_check(
    asset=dg.AssetKey(["warehouse", "conversations"]),
    description=f"The newest conversation started within CES_FRESHNESS_HOURS ({FRESHNESS_HOURS:g} h).",
)
def conversations_are_fresh(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    def check(conn: duckdb.DuckDBPyConnection) -> dg.AssetCheckResult:
        freshness = checks.newest_conversation(conn)
        age = freshness.age_hours()
        return dg.AssetCheckResult(
            passed=age is not None and age <= FRESHNESS_HOURS,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={
                "newest_start": str(freshness.newest_start),
                "age_hours": round(age, 2) if age is not None else -1.0,
                "conversations": freshness.conversations,
                "threshold_hours": FRESHNESS_HOURS,
            },
        )

    return _with_connection(warehouse, check)


WAREHOUSE_CHECKS = [
    *UNIQUE_KEY_CHECKS,
    spans_have_parents,
    no_negative_durations,
    turn_counts_agree,
    conversations_are_fresh,
]
