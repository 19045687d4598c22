"""What the CLI reports of a finished run, read from a real run's event log."""

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from pipelines.orchestration.dagster_private import run_log
from pipelines.orchestration.partitions import RANGE_END_TAG, RANGE_START_TAG
from pipelines.orchestration.runs import PlannedRun, run_outcome

PARTITIONS = dg.StaticPartitionsDefinition(["2026-11-01", "2026-11-02"])


@dg.asset(partitions_def=PARTITIONS, check_specs=[dg.AssetCheckSpec("loaded", asset="table")])
def table(context: dg.AssetExecutionContext) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    yield dg.MaterializeResult()
    # a run of the other day, side by side with this one, loads it before this step checks its own
    context.instance.report_runless_asset_event(dg.AssetMaterialization("table", partition="2026-11-02"))
    context.log.warning("12 listed conversations came without their spans")
    yield dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.WARN, description="3 late")


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        yield instance


def test_a_range_runs_outcome_holds_the_loads_warnings_not_dagsters_bookkeeping(
    instance: dg.DagsterInstance,
) -> None:
    """Dagster links the checks of a range run to the asset's newest materialization and logs a
    "Data version mismatch" warning when another run's came in between: true of its records, noise
    on the command line, where the load's own warnings and checks are what the user reads."""
    tags = {RANGE_START_TAG: "2026-11-01", RANGE_END_TAG: "2026-11-01"}
    result = dg.materialize([table], instance=instance, tags=tags)
    logged = [entry.user_message for entry in run_log(instance, result.run_id) if entry.dagster_event is None]
    assert any(message.startswith("Data version mismatch for asset") for message in logged)

    outcome = run_outcome(PlannedRun("support-bot 2026-11-01", tags, 1), result.run_id, instance)

    assert outcome.success
    assert outcome.warnings == ["12 listed conversations came without their spans"]
    assert outcome.failed_checks == ["table:loaded (WARN)"]
    assert outcome.found_by_checks == {"table:loaded": "3 late"}
