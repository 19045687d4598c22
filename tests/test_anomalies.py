"""metric_anomalies scores every day's metrics against the 28 days before it (median and MAD, a
robust z-score) and flags the days beyond CES_ANOMALY_Z: a spike planted in a steady history is
found, the steady days are not, and the threshold the warehouse holds decides."""

from __future__ import annotations

import statistics
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import dagster as dg
from conversation_samples import APP, full_conversation
from pytest import approx
from test_warehouse import write_partition

from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.orchestration.checks import conversation_check_results
from pipelines.serve.changes import what_changed
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import run_query

FIRST = date(2026, 9, 1)
STEADY = [4, 5, 4, 6, 5, 4, 5] * 5  # 35 days
SPIKE = 15  # the day after them


def _history(
    root: Path, first: date = FIRST, steady: list[int] = STEADY, last: int = SPIKE
) -> tuple[Lake, list[tuple[str, date]]]:
    """The steady days from `first`, then a day of `last` conversations."""
    lake = Lake(str(root / "lake"))
    partitions = []
    for offset, count in enumerate([*steady, last]):
        day = first + timedelta(days=offset)
        conversations = [
            full_conversation(f"{day:%Y%m%d}-{n}", start=f"{day}T{8 + n % 16:02d}:{n // 16:02d}:00Z")
            for n in range(count)
        ]
        write_partition(lake, APP, day, conversations)
        partitions.append((APP, day))
    return lake, partitions


def _flagged(warehouse: Warehouse) -> list[tuple]:
    columns, rows = run_query(warehouse, "anomalies", {"metric": "conversations"})
    return [(row[columns.index("day")], row[columns.index("z")]) for row in rows]


def test_a_planted_spike_is_flagged_and_the_steady_days_are_not(tmp_path: Path) -> None:
    lake, partitions = _history(tmp_path)
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, partitions)
    spike_day = FIRST + timedelta(days=len(STEADY))
    baseline = STEADY[-28:]
    median = statistics.median(baseline)
    mad = statistics.median(abs(value - median) for value in baseline)
    z = 0.6745 * (SPIKE - median) / mad
    assert _flagged(warehouse) == [(spike_day, approx(round(z, 2)))]
    with warehouse.connect(read_only=True) as conn:
        scored = conn.execute(
            "SELECT day, baseline_days, z, anomalous FROM metric_anomalies "
            "WHERE metric = 'conversations' ORDER BY day"
        ).fetchall()
    assert [days for _, days, _, _ in scored[:8]] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert all(z is None and not flagged for _, _, z, flagged in scored[:7])  # under 7 days of baseline
    assert [day for day, _, _, flagged in scored if flagged] == [spike_day]
    with warehouse.connect(read_only=True) as conn:  # 36 days: rolled up in two chunks of partitions
        rolled = conn.execute(
            "SELECT day, agent, model, llm_calls, input_tokens, output_tokens "
            "FROM daily_llm_tokens ORDER BY ALL"
        ).fetchall()
        direct = conn.execute(
            "SELECT day, agent, model, count(*), coalesce(sum(input_tokens), 0), "
            "coalesce(sum(output_tokens), 0) FROM llm_calls GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    assert rolled == direct and len({row[0] for row in rolled}) == len(STEADY) + 1
    with warehouse.connect(read_only=True) as conn:
        changed = what_changed(conn, APP, spike_day, spike_day + timedelta(days=1))
    flagged = {row["metric"]: row for row in changed["anomalies"]}
    assert {row["day"] for row in changed["anomalies"]} == {str(spike_day)}
    assert {"conversations", "tokens", "cost_usd"} <= set(flagged)  # volume drives tokens and cost
    assert flagged["conversations"]["z"] == approx(z)
    volume = next(metric for metric in changed["metrics"] if metric["metric"] == "conversations")
    assert (volume["current"], volume["previous"]) == (SPIKE, STEADY[-1])


def test_the_threshold_is_the_warehouses_setting(tmp_path: Path) -> None:
    lake, partitions = _history(tmp_path)
    warehouse = Warehouse(str(tmp_path / "w.duckdb"), anomaly_z=50.0)  # beyond the spike's z (~14)
    load_conversation_partitions(lake, warehouse, partitions)
    assert _flagged(warehouse) == []


def test_the_asset_check_warns_when_the_newest_complete_day_loaded_is_anomalous(tmp_path: Path) -> None:
    lake, partitions = _history(tmp_path)
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, partitions)
    spike_day = FIRST + timedelta(days=len(STEADY))

    def check(last: date) -> dg.AssetCheckResult:
        with warehouse.connect(read_only=True) as conn:
            results = conversation_check_results(conn, [APP], FIRST, last, freshness_hours=10**6)
            return next(result for result in results if result.check_name == "newest_day_not_anomalous")

    flagged = check(spike_day)
    assert not flagged.passed and flagged.severity == dg.AssetCheckSeverity.WARN
    sample = flagged.metadata["sample"].value
    assert {entry["day"] for entry in sample} == {str(spike_day)}
    assert "conversations" in {entry["metric"] for entry in sample}
    first = sample[0]  # the largest |z|: what the CLI and the UI say the check found
    assert flagged.description == (
        f"{len(sample)} found, the first: app {APP}, day {spike_day}, metric {first['metric']}, "
        f"value {first['value']}, baseline_median {first['baseline_median']}, z {first['z']}"
    )
    steady = check(spike_day - timedelta(days=1))  # the steady day before it
    assert steady.passed and steady.description is None


def _scores(warehouse: Warehouse, metric: str) -> dict[date, tuple]:
    with warehouse.connect(read_only=True) as conn:
        found = conn.execute(
            "SELECT day, round(value, 9), round(baseline_median, 9), round(baseline_mad, 9), baseline_days "
            "FROM daily_metric_scores WHERE metric = ?",
            [metric],
        ).fetchall()
    return {day: tuple(rest) for day, *rest in found}


def test_the_scores_loads_keep_are_those_of_the_whole_history_late_days_and_new_prices_included(
    tmp_path: Path,
) -> None:
    """A day's values are in the baselines of the 28 days after it: days loaded late score those
    again, and new prices score every day's cost again."""
    lake, partitions = _history(tmp_path)
    spike_day = FIRST + timedelta(days=len(STEADY))
    kept = Warehouse(str(tmp_path / "kept.duckdb"))
    load_conversation_partitions(lake, kept, partitions[10:])
    assert _scores(kept, "conversations")[spike_day][-1] == 25  # its baseline: days 10 to 34
    load_conversation_partitions(lake, kept, partitions[:10])  # the first ten days, late
    fresh = Warehouse(str(tmp_path / "fresh.duckdb"))
    load_conversation_partitions(lake, fresh, partitions)
    for metric in ("conversations", "tokens", "cost_usd", "turn_p90_seconds"):
        assert _scores(kept, metric) == _scores(fresh, metric), metric
    assert _scores(kept, "conversations")[spike_day][-1] == 28
    assert _flagged(kept) == _flagged(fresh) != []

    prices = tmp_path / "prices.csv"
    prices.write_text(
        "model,input_usd_per_million,output_usd_per_million\ngemini-2.5-flash,3.0,25.0\n", encoding="utf-8"
    )
    before = _scores(kept, "cost_usd")
    repriced = Warehouse(kept.path, model_prices=str(prices))
    with repriced.connect() as conn:
        repriced.ensure_schema(conn)  # what the next load does first
        costs = dict(
            conn.execute("SELECT day, round(sum(cost_usd), 9) FROM daily_costs GROUP BY day").fetchall()
        )
    after = _scores(repriced, "cost_usd")
    assert {day: scored[0] for day, scored in after.items()} == costs
    assert all(after[day][0] == approx(10 * before[day][0]) for day in before)  # ten times the bundled prices


def test_a_day_not_over_is_not_judged_on_its_totals(tmp_path: Path) -> None:
    """Today (UTC) holds the conversations so far: its volume, tokens and cost are scored but not
    anomalous against whole days (an hourly load would flag each morning's); its percentiles are
    judged as any day's."""
    today = datetime.now(UTC).date()
    busy = [20, 21, 19, 20, 22, 20, 21] * 5  # a day so far of 2 lies 12 robust deviations below
    lake, partitions = _history(tmp_path, first=today - timedelta(days=len(busy)), steady=busy, last=2)
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, partitions)
    with warehouse.connect(read_only=True) as conn:
        scored = dict(
            conn.execute(
                "SELECT metric, (z, anomalous, partial) FROM metric_anomalies WHERE day = ? AND metric IN "
                "('conversations', 'tokens', 'cost_usd', 'turn_p90_seconds')",
                [today],
            ).fetchall()
        )
    assert scored["conversations"][0] < -3.5 and scored["tokens"][0] < 0  # beyond the threshold, and down
    assert not any(anomalous for _, anomalous, _ in scored.values())
    # the totals so far are partial; a percentile is judged as any day's
    assert {metric for metric, (_, _, partial) in scored.items() if partial} == {
        "conversations",
        "tokens",
        "cost_usd",
    }
    _, rows = run_query(warehouse, "anomalies", {"since": today - timedelta(days=3)})
    assert rows == []
    with warehouse.connect(read_only=True) as conn:  # the last three days against the three before
        changed = what_changed(conn, APP, today - timedelta(days=2), today + timedelta(days=1))
    volume = next(metric for metric in changed["metrics"] if metric["metric"] == "conversations")
    assert volume["current"] == statistics.mean(busy[-2:])  # the two days over, not today's so far
    assert volume["previous"] == statistics.mean(busy[-5:-2])
    assert {row["day"] for row in changed["anomalies"]} <= {str(today - timedelta(days=d)) for d in (1, 2)}
