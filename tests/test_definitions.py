"""The Dagster code location loads, and holds what the README promises."""

from __future__ import annotations

import dagster as dg

from pipelines.definitions import build_definitions, defs
from pipelines.orchestration.resources import resources_from_env
from pipelines.transform.schemas import ALL_TABLES


def test_the_code_location_validates() -> None:
    dg.Definitions.validate_loadable(defs)


def test_every_table_is_an_asset_and_every_job_schedule_and_sensor_is_there() -> None:
    definitions = build_definitions()
    graph = definitions.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert {f"warehouse/{spec.name}" for spec in ALL_TABLES} <= keys
    assert {"raw/conversation_pages", "raw/evaluation_runs", "lake/conversations", "lake/spans"} <= keys
    jobs = {job.name for job in definitions.resolve_all_job_defs()}
    assert {
        "ingest_conversations",
        "rebuild_conversations",
        "ingest_evaluation_runs",
        "start_evaluation_job",
    } <= jobs
    for name in ("conversations_hourly", "evaluation_runs_daily"):
        assert definitions.resolve_schedule_def(name).name == name
    for name in ("unfinished_evaluation_runs_sensor", "configured_apps_sensor"):
        assert definitions.resolve_sensor_def(name).name == name
    checks = {(key.asset_key.to_user_string(), key.name) for key in graph.asset_check_keys}
    assert ("warehouse/spans", "spans_have_parents") in checks
    assert ("lake/conversations", "rows_in_partition") in checks
    assert all(
        ("warehouse/" + spec.name, "unique_keys") in checks for spec in ALL_TABLES if spec.name != "rejects"
    )


def test_the_access_token_is_an_env_var_reference_not_a_value(monkeypatch) -> None:
    monkeypatch.setenv("CES_ACCESS_TOKEN", "secret-token-value")
    ces = resources_from_env()["ces"]
    assert "secret-token-value" not in repr(ces)
    assert ces.access_token == dg.EnvVar("CES_ACCESS_TOKEN")
