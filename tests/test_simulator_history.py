"""The simulator's history carries what the analysis must find, through the whole pipeline: the
incident it plants (the first app's tools six times slower on one day) is the only anomalous day,
its load's asset check warns about it, and the tuned model no price file lists is named, never
costed, while the priced models' calls are."""

from __future__ import annotations

from datetime import timedelta

import dagster as dg
import pytest
from dagster_runs import run_partitions
from test_cli import base_env, cli

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.corpus.conversations import UNPRICED_MODEL
from pipelines.cli.local import DEMO_DAYS
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import run_query

SCALE = SimulatorScale(days=DEMO_DAYS)
"""The demo's history (`ces-pipeline demo`'s defaults)."""
INCIDENT = SCALE.start_date + timedelta(days=SCALE.incident_day or 0)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("history")
    with pytest.MonkeyPatch.context() as env, running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        env.setenv("CES_MCP_URL", sim.url)
        env.setenv("CES_APPS", ",".join(sim.apps))
        env.setenv("CES_LAKE", str(root / "lake"))
        env.setenv("CES_WAREHOUSE", str(root / "warehouse.duckdb"))
        env.setenv("CES_MAX_RPS", "500")
        days = [SCALE.start_date + timedelta(days=offset) for offset in range(SCALE.days)]
        partitions = [(app, day) for app in sim.apps for day in days]
        outcomes = run_partitions("ingest_conversations", partitions, instance=dg.DagsterInstance.ephemeral())
        yield sim.apps, Warehouse(str(root / "warehouse.duckdb")), outcomes, root / "lake"


def _rows(warehouse: Warehouse, query: str, params: dict) -> list[dict]:
    columns, rows = run_query(warehouse, query, params)
    return [dict(zip(columns, row, strict=True)) for row in rows]


def test_the_planted_incident_is_the_only_anomaly_and_its_check_warns(ingested) -> None:
    apps, warehouse, outcomes, _ = ingested
    assert all(outcome.success for outcome in outcomes)
    flagged = _rows(warehouse, "anomalies", {})
    assert {(row["day"], row["app"]) for row in flagged} == {(INCIDENT, apps[0])}
    tools = next(row for row in flagged if row["metric"] == "tool_p90_seconds")
    assert tools["value"] > 2 * tools["baseline_median"] and tools["z"] > 3.5
    assert tools["baseline_days"] == SCALE.incident_day
    warned = [outcome for outcome in outcomes if outcome.failed_checks]
    assert [check for outcome in warned for check in outcome.failed_checks] == [
        "warehouse/conversation_tables:newest_day_not_anomalous (WARN)"
    ]
    assert apps[0] in warned[0].label
    found = warned[0].found_by_checks["warehouse/conversation_tables:newest_day_not_anomalous"]
    largest = max(flagged, key=lambda row: abs(row["z"]))  # the run's outcome names it first
    assert found.startswith(f"{len(flagged)} found, the first: app {apps[0]}, day {INCIDENT}, ")
    assert f"metric {largest['metric']}, " in found


def test_the_model_without_a_price_is_named_and_the_priced_ones_costed(ingested) -> None:
    _, warehouse, _, _ = ingested
    costs = _rows(warehouse, "daily_cost", {"by": "model"})
    unpriced = [row for row in costs if row["subject"] == UNPRICED_MODEL]
    assert unpriced and all(row["cost_usd"] is None for row in unpriced)
    assert all(row["unpriced_models"] == UNPRICED_MODEL for row in unpriced)
    assert sum(row["unpriced_calls"] for row in unpriced) == sum(row["llm_calls"] for row in unpriced)
    priced = [row for row in costs if row["subject"] != UNPRICED_MODEL]
    assert {row["subject"] for row in priced} >= {"gemini-2.5-flash", "gemini-2.5-pro"}
    assert all(row["cost_usd"] > 0 and row["unpriced_calls"] is None for row in priced)


def test_the_cli_says_what_the_warning_check_found(ingested, tmp_path) -> None:
    """A load's warning names the anomaly it found, not only the check's name."""
    apps, _, _, lake = ingested
    env = base_env(tmp_path) | {"CES_LAKE": str(lake)}
    until = SCALE.start_date + timedelta(days=SCALE.days)
    window = ("--since", str(SCALE.start_date), "--until", str(until), "--skip-evaluations")
    done = cli("rebuild", *window, "--app", apps[0], env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())  # as one line, however the console wrapped it
    assert (
        "warning: warehouse/conversation_tables:newest_day_not_anomalous in 1 of 1 runs "
        f"(2 found, the first: app {apps[0]}, day {INCIDENT}, metric tool_p90_seconds, value "
    ) in said, said
