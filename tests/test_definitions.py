"""The Dagster code location loads, and holds what the README promises."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import dagster as dg
import pytest
import yaml

from pipelines.config import Settings
from pipelines.definitions import build_definitions, defs
from pipelines.orchestration.resources import resources_from_settings
from pipelines.transform.schemas import ALL_TABLES

ROOT = Path(__file__).resolve().parent.parent


def test_the_code_location_validates_and_names_a_variable_no_setting_reads(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CES_MAX_RSP", "3")
    dg.Definitions.validate_loadable(defs())
    assert "CES_MAX_RSP is not a setting: did you mean CES_MAX_RPS?" in caplog.messages


def test_every_table_is_an_asset_and_every_job_schedule_and_sensor_is_there() -> None:
    definitions = build_definitions(Settings.from_env({}))
    graph = definitions.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert keys == {
        "raw/conversation_pages",
        "lake/conversation_tables",
        "warehouse/conversation_tables",
        "raw/evaluation_runs",
        "warehouse/evaluation_tables",
        "report/dashboard",
    }
    jobs = {job.name for job in definitions.resolve_all_job_defs()}
    assert {
        "ingest_conversations",
        "rebuild_conversations",
        "ingest_evaluation_runs",
        "start_evaluation_job",
        "warehouse_maintenance_job",
    } <= jobs
    for name in ("conversations_hourly", "evaluation_runs_daily", "warehouse_maintenance_daily"):
        assert definitions.resolve_schedule_def(name).name == name
    for name in ("unfinished_evaluation_runs_sensor", "configured_apps_sensor", "report_after_loads"):
        assert definitions.resolve_sensor_def(name).name == name
    checks = {(key.asset_key.to_user_string(), key.name) for key in graph.asset_check_keys}
    assert ("warehouse/conversation_tables", "spans_have_parents") in checks
    assert ("lake/conversation_tables", "rows_in_partition") in checks
    # loaded_partitions needs no check: its insert adds a key once
    tables = [spec.name for spec in ALL_TABLES if spec.name not in {"rejects", "loaded_partitions"}]
    assert all(
        (f"warehouse/{dataset}_tables", f"unique_keys_{table}") in checks
        for table in tables
        for dataset in (("evaluation",) if table.startswith("evaluation") else ("conversation",))
    )


def test_partitions_start_early_enough_and_runs_cover_ranges() -> None:
    """Any window of CES history is a partition range, and a backfill run covers up to
    CES_DAYS_PER_RUN days of one app; the fetch steps share the ces_api pool."""
    settings = Settings.from_env({"CES_DAYS_PER_RUN": "20"})
    graph = build_definitions(settings).resolve_asset_graph()
    pages = graph.get(dg.AssetKey(["raw", "conversation_pages"]))
    days = pages.partitions_def.get_partitions_def_for_dimension("date")
    assert days.start.date() == date(2024, 1, 1)
    assert pages.backfill_policy == dg.BackfillPolicy.multi_run(max_partitions_per_run=20)
    assert pages.pools == {"ces_api"}
    later = Settings.from_env({"CES_START_DATE": "2025-06-01"})
    pages = build_definitions(later).resolve_asset_graph().get(dg.AssetKey(["raw", "conversation_pages"]))
    assert pages.partitions_def.get_partitions_def_for_dimension("date").start.date() == date(2025, 6, 1)


def test_the_access_token_is_an_env_var_reference_not_a_value() -> None:
    ces = resources_from_settings(Settings.from_env({"CES_ACCESS_TOKEN": "secret-token-value"}))["ces"]
    assert "secret-token-value" not in repr(ces)
    assert ces.access_token == dg.EnvVar("CES_ACCESS_TOKEN")


def test_the_ces_resource_carries_every_setting_and_gives_them_back() -> None:
    env = {
        "CES_MCP_URL": "http://127.0.0.1:1/mcp",
        "CES_APPS": "projects/p/locations/us/apps/a,projects/p/locations/us/apps/b",
        "CES_SOURCES": "live,eval",
        "CES_QUOTA_PROJECT": "billing",
        "CES_MAX_RPS": "3",
        "CES_PAGE_SIZE": "7",
        "CES_EVALUATION_RUNS": "projects/p/locations/us/apps/a/evaluationRuns/r",
        "CES_RATE_LIMIT_FILE": "/tmp/rate",
        "CES_MAX_ATTEMPTS": "2",
    }
    settings = Settings.from_env(env).ces
    assert resources_from_settings(Settings.from_env(env))["ces"].settings() == settings
    assert resources_from_settings(Settings.from_env({}))["ces"].settings() == Settings.from_env({}).ces


def test_every_job_runs_its_steps_in_the_run_process() -> None:
    definitions = build_definitions(Settings.from_env({}))
    for job in definitions.resolve_all_job_defs():
        assert job.executor_def.name == "in_process", job.name


_RUN_WITH_THE_INSTANCE = """
import dagster as dg

@dg.asset
def counted(context):
    context.log.info("counted 3 rows")
    return 3

instance = dg.DagsterInstance.get()
result = dg.materialize([counted], instance=instance)
records = instance.all_logs(result.run_id)
kinds = {record.dagster_event.event_type_value for record in records if record.dagster_event}
print("STEP_START" in kinds and "STEP_SUCCESS" in kinds)
"""


@pytest.mark.parametrize("instance", ["dagster_home", "scale"])
def test_runs_of_the_project_instances_print_info_and_keep_every_event(instance: str, tmp_path: Path) -> None:
    """`make dev`'s terminal shows what runs say, not each step's DEBUG events; the event log,
    which the UI and the CLI read, still holds them all."""
    home = tmp_path / "home"
    home.mkdir()
    config = yaml.safe_load((ROOT / instance / "dagster.yaml").read_text())
    (home / "dagster.yaml").write_text(yaml.safe_dump({"python_logs": config["python_logs"]}))
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    ran = subprocess.run(
        [sys.executable, "-c", _RUN_WITH_THE_INSTANCE], env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "True"
    assert "counted 3 rows" in ran.stderr and " - DEBUG - " not in ran.stderr
