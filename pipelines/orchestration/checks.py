"""Asset checks, evaluated in the step of the warehouse load they check, on what it loaded."""

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

from pipelines.orchestration.keys import WAREHOUSE_CONVERSATIONS, WAREHOUSE_EVALUATIONS
from pipelines.transform.schemas import (
    CONVERSATION_TABLES,
    EVALUATION_RESULT_TABLES,
    EVALUATION_RUN_OPERATIONS,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_TABLES,
    TableSpec,
)
from pipelines.warehouse import checks
from pipelines.warehouse.queries import named_query

WARNING_CHECKS = frozenset(
    {
        "no_negative_durations",
        "turn_counts_agree",
        "conversations_are_fresh",
        "newest_day_not_anomalous",
        "no_negative_latencies",
        "evaluation_results_plausible",
    }
)
"""Checks that report without blocking: what they find is information about what CES sent, not
corruption of ours. A negative duration or latency is a value CES sent (a protobuf Duration is
signed, and a span timed across hosts may end before it starts): blocking, it failed every later
run of the partition, and, as the latencies are checked over all of an app's runs, every later
evaluation load of the app, with the rows loaded all the same."""


def _check(
    asset: dg.AssetKey, name: str, conn: duckdb.DuckDBPyConnection, sql: str, *args: Any
) -> dg.AssetCheckResult:
    """Check `name` of `asset`: the outcome of `sql/checks/SQL.sql` (`args`: its parameters and table)."""
    outcome = checks.run_check(conn, sql, *args)
    return dg.AssetCheckResult(
        asset_key=asset,
        check_name=name,
        passed=outcome.passed,
        severity=dg.AssetCheckSeverity.WARN if name in WARNING_CHECKS else dg.AssetCheckSeverity.ERROR,
        metadata={"failures": outcome.failures, "sample": dg.MetadataValue.json(outcome.sample)},
        description=None if outcome.passed else outcome.summary(),
    )


def unique_keys(spec: TableSpec) -> str:
    return f"unique_keys_{spec.name}"


def _spec(asset: dg.AssetKey, name: str, description: str) -> dg.AssetCheckSpec:
    """A check that blocks downstream assets unless it is one of `WARNING_CHECKS`."""
    return dg.AssetCheckSpec(name, asset=asset, blocking=name not in WARNING_CHECKS, description=description)


def _unique_spec(asset: dg.AssetKey, spec: TableSpec) -> dg.AssetCheckSpec:
    return _spec(
        asset, unique_keys(spec), f"No two rows of {spec.name} share the key ({', '.join(spec.key)})."
    )


def conversation_check_specs(freshness_hours: float) -> list[dg.AssetCheckSpec]:
    descriptions = {
        "spans_have_parents": "Every span's parent exists.",
        "no_negative_durations": "No conversation, turn or span has a negative duration (warns).",
        "turn_counts_agree": "turn_count as reported by the API agrees with the turns loaded (warns).",
        "conversations_are_fresh": f"The app's newest conversation is under {freshness_hours:g} h old "
        "(CES_FRESHNESS_HOURS) at the end of the days loaded, or now if they end later: a schedule's "
        "run warns of an app gone quiet, a rebuild of past days only of a quiet last day",
        "newest_day_not_anomalous": "No daily metric of each app's newest complete day loaded stands out "
        "from its 28 days before beyond CES_ANOMALY_Z (metric_anomalies; warns)",
    }
    return [
        *(_unique_spec(WAREHOUSE_CONVERSATIONS, spec) for spec in CONVERSATION_TABLES),
        *(_spec(WAREHOUSE_CONVERSATIONS, name, text) for name, text in descriptions.items()),
    ]


def conversation_check_results(
    conn: duckdb.DuckDBPyConnection,
    apps: Sequence[str],
    first: date,
    last: date,
    *,
    freshness_hours: float,
    parts_root: Path | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """Run every conversation check on what a run just loaded: `apps` × days `first`…`last`
    (`parts_root`: a DuckDB file's parts, whose views of those partitions alone they read)."""
    days = checks.scope_partitions(conn, apps, first, last, parts_root)
    for spec in CONVERSATION_TABLES:
        yield _check(WAREHOUSE_CONVERSATIONS, unique_keys(spec), conn, "duplicate_keys", days, spec)
    yield _check(WAREHOUSE_CONVERSATIONS, "spans_have_parents", conn, "orphan_spans", days)
    yield _check(WAREHOUSE_CONVERSATIONS, "no_negative_durations", conn, "negative_durations", days)
    yield _check(WAREHOUSE_CONVERSATIONS, "turn_counts_agree", conn, "turn_count_mismatches", days)
    complete = min(last, datetime.now(UTC).date() - timedelta(days=1))
    params = {"apps": list(apps), "last": complete}
    yield _check(WAREHOUSE_CONVERSATIONS, "newest_day_not_anomalous", conn, "newest_day_anomalies", params)
    as_of = min(datetime.now(UTC), datetime.combine(last + timedelta(days=1), time.min, UTC))
    ages = {app: checks.newest_conversation(conn, app) for app in apps}
    stale = {app: freshness.age_hours(as_of) for app, freshness in ages.items()}
    quiet = [
        f"{app.rsplit('/', 1)[-1]}: "
        + ("no conversation loaded" if age is None else f"newest {age:.0f} h old")
        for app, age in stale.items()
        if age is None or age > freshness_hours
    ]
    limit = f"CES_FRESHNESS_HOURS={freshness_hours:g}"
    yield dg.AssetCheckResult(
        asset_key=WAREHOUSE_CONVERSATIONS,
        check_name="conversations_are_fresh",
        passed=not quiet,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"as of {as_of:%Y-%m-%d %H:%M} UTC, {', '.join(quiet)} ({limit})" if quiet else None,
        metadata={
            "newest_start": {app: str(freshness.newest_start) for app, freshness in ages.items()},
            "age_hours": {app: round(age, 2) if age is not None else -1.0 for app, age in stale.items()},
            "conversations": sum(freshness.conversations for freshness in ages.values()),
            "threshold_hours": freshness_hours,
            "as_of": as_of.isoformat(),
        },
    )


EVALUATION_CHECKED_TABLES = (
    *EVALUATION_RUN_TABLES,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_OPERATIONS,
    *EVALUATION_RESULT_TABLES,
)

REGRESSION_GATE = "no_evaluation_regressions"
GATE_CHECK = f"{WAREHOUSE_EVALUATIONS.to_user_string()}:{REGRESSION_GATE}"
"""The gate as a run's outcome names it (`asset:check`)."""
GATED_KINDS = ("evaluation", "score", "turn")
"""What the regression gate judges: pass rates, mean scores and the golden turns' p90 latency
(the latency report's per-tool and per-model percentiles inform, they do not gate)."""

_EVALUATION_CHECKS = {
    "no_negative_latencies": "No latency percentile of a run's latency report is negative (warns).",
    "evaluation_results_plausible": "No score outside its metric's range, no unknown outcome, every "
    "replayed EVAL conversation in the warehouse where it holds the app's conversations from the run's "
    "creation to a day after its result's (warns: such results load with what they have; this counts them).",
}
"""Each check of an app's runs beside the unique keys and the regression gate: its description."""

EVALUATION_CHECK_SPECS = [
    *(_unique_spec(WAREHOUSE_EVALUATIONS, spec) for spec in EVALUATION_CHECKED_TABLES),
    *(_spec(WAREHOUSE_EVALUATIONS, name, text) for name, text in _EVALUATION_CHECKS.items()),
    dg.AssetCheckSpec(
        REGRESSION_GATE,
        asset=WAREHOUSE_EVALUATIONS,
        blocking=False,
        description="The app's newest completed evaluation run is no worse than the previous completed "
        "run of the same evaluations: no pass rate dropped by more than CES_REGRESSION_PASS_RATE_POINTS, "
        "no mean score worsened by more than CES_REGRESSION_SCORE_PCT, the golden turns' p90 latency "
        "rose by no more than CES_REGRESSION_LATENCY_PCT (severity: CES_REGRESSION_SEVERITY).",
    ),
]


def gated_rows(conn: duckdb.DuckDBPyConnection, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of `evaluation_regressions` (with the gate's `params`) that the gate judges by."""
    columns, rows = named_query("evaluation_regressions").execute(conn, params)
    found = [dict(zip(columns, row, strict=True)) for row in rows]
    return [row for row in found if row["kind"] in GATED_KINDS]


SAID_CHANGES = 3
"""The changes a regressed gate's description names (its metadata lists them all)."""


def describe_change(row: Mapping[str, Any]) -> str:
    return f"{row['label']} {row['metric']}: {row['previous_value']:.4g} → {row['latest_value']:.4g}"


def regression_gate_result(
    conn: duckdb.DuckDBPyConnection, params: Mapping[str, Any], severity: str
) -> dg.AssetCheckResult:
    regressed = gated_rows(conn, {**params, "status": "regressed"})
    runs = {key: regressed[0][key] for key in ("latest_run", "previous_run")} if regressed else {}
    said = None
    if regressed:  # what `ces-pipeline ingest` says of it, and the UI beside the check
        changes = "; ".join(describe_change(row) for row in regressed[:SAID_CHANGES])
        more = f"; {len(regressed) - SAID_CHANGES} more" if len(regressed) > SAID_CHANGES else ""
        latest, previous = (runs[key].rsplit("/", 1)[-1] for key in ("latest_run", "previous_run"))
        said = f"run {latest} against {previous}: {changes}{more}"
    return dg.AssetCheckResult(
        asset_key=WAREHOUSE_EVALUATIONS,
        check_name=REGRESSION_GATE,
        passed=not regressed,
        severity=dg.AssetCheckSeverity.ERROR if severity == "error" else dg.AssetCheckSeverity.WARN,
        description=said,
        metadata={
            "regressions": len(regressed),
            "regressed": dg.MetadataValue.json([describe_change(row) for row in regressed]),
            **runs,
        },
    )


def evaluation_check_results(
    conn: duckdb.DuckDBPyConnection,
    app: str,
    gate_params: Mapping[str, Any],
    gate_severity: str,
    parts_root: Path | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """Run every evaluation check on the app's runs (`parts_root`: a DuckDB file's parts, of
    which the app's newest day's conversations alone are read)."""
    for spec in EVALUATION_CHECKED_TABLES:
        yield _check(WAREHOUSE_EVALUATIONS, unique_keys(spec), conn, "duplicate_run_keys", {"app": app}, spec)
    yield _check(WAREHOUSE_EVALUATIONS, "no_negative_latencies", conn, "negative_latencies", {"app": app})
    loaded_from, loaded_until = checks.loaded_span(conn, app, parts_root)
    params = {"app": app, "loaded_from": loaded_from, "loaded_until": loaded_until}
    yield _check(
        WAREHOUSE_EVALUATIONS, "evaluation_results_plausible", conn, "evaluation_result_anomalies", params
    )
    yield regression_gate_result(conn, gate_params, gate_severity)
