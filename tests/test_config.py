"""Every setting is checked when it is read: a bad one is one line naming its variable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.config import (
    CesSettings,
    ConfigError,
    OrchestrationSettings,
    ServeSettings,
    Settings,
    StorageSettings,
    unknown_variables,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("CES_START_DATE", "garbage", "a date YYYY-MM-DD"),
        ("CES_MAX_ATTEMPTS", "nan", "a whole number"),
        ("CES_API_CONCURRENCY", "abc", "a whole number"),
        ("CES_PAGE_SIZE", "1.5", "a whole number"),
        ("CES_DAYS_PER_RUN", "inf", "a whole number"),
        ("CES_WAREHOUSE_LOCK_TIMEOUT", "abc", "a number"),
        ("CES_MAX_RPS", "nan", "a finite number"),  # would turn the rate limit off
        ("CES_MAX_RPS", "inf", "a finite number"),
        ("CES_MAX_RPS", "0", "positive"),
        ("CES_TIMEOUT_SECONDS", "nan", "a finite number"),
        ("CES_RETRY_MAX_SECONDS", "inf", "a finite number"),
        ("CES_MCP_URL", "not-a-url", "an http(s) URL"),
        ("CES_MCP_URL", "ftp://example.com/mcp", "an http(s) URL"),
        ("CES_SOURCES", "LIVE,BOGUS", "unknown source BOGUS"),
        ("CES_FRESHNESS_HOURS", "-1", "positive"),
        ("CES_CONVERSATIONS_CRON", "garbage", "a cron schedule"),
        ("CES_WAREHOUSE_MEMORY_LIMIT", "lots", "a size such as"),
        ("CES_APPS", "my-app", "not an app resource name"),
        ("CES_QUEUE_RUNS", "maybe", "true or false"),
    ],
)
def test_a_bad_setting_names_its_variable(name: str, value: str, says: str) -> None:
    with pytest.raises(ConfigError, match=name) as info:
        Settings.from_env({name: value})
    assert says in str(info.value)


def test_evaluation_runs_must_be_of_the_configured_apps() -> None:
    app, other = "projects/p/locations/us/apps/a", "projects/p/locations/us/apps/b"
    with pytest.raises(ConfigError) as info:
        Settings.from_env(
            {"CES_APPS": app, "CES_EVALUATION_RUNS": f"{app}/evaluationRuns/1,{other}/evaluationRuns/2"}
        )
    assert str(info.value) == (
        f"CES_EVALUATION_RUNS names runs of apps not in CES_APPS, never fetched: {other}/evaluationRuns/2"
    )
    runs = Settings.from_env({"CES_APPS": f"{other},{app}", "CES_EVALUATION_RUNS": f"{app}/evaluationRuns/1"})
    assert runs.ces.evaluation_runs == (f"{app}/evaluationRuns/1",)


def test_good_settings_in_every_spelling_are_read() -> None:
    settings = Settings.from_env(
        {
            "CES_SOURCES": "live, eval",
            "CES_MAX_RPS": " 2.5 ",
            "CES_PAGE_SIZE": "50",
            "CES_CONVERSATIONS_CRON": "@hourly",
            "CES_EVALUATIONS_CRON": "*/15 2-4 * * MON-FRI",
            "CES_MCP_URL": "http://127.0.0.1:8765/mcp",
            "CES_QUEUE_RUNS": " True ",
        }
    )
    assert settings.ces.sources == ("LIVE", "EVAL") and settings.ces.max_rps == 2.5
    assert settings.orchestration.queue_runs is True
    assert Settings.from_env({"CES_QUEUE_RUNS": "off"}).orchestration.queue_runs is False
    assert Settings.from_env({}).orchestration.queue_runs is False
    assert settings.ces.page_size == 50 and settings.orchestration.conversations_cron == "@hourly"


def test_the_command_says_it_in_one_line_and_exits_2() -> None:
    env = {"PATH": "/usr/bin:/bin", "CES_MAX_RPS": "nan", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "query", "--list"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "configuration error: CES_MAX_RPS must be a finite number, got 'nan'"


def test_the_regression_gate_reads_its_thresholds_and_refuses_an_unknown_severity() -> None:
    env = {"CES_REGRESSION_PASS_RATE_POINTS": "2.5", "CES_REGRESSION_SEVERITY": "error"}
    orchestration = Settings.from_env(env).orchestration
    assert (orchestration.regression_pass_rate_points, orchestration.regression_severity) == (2.5, "error")
    assert (orchestration.regression_score_pct, orchestration.regression_latency_pct) == (10.0, 20.0)
    with pytest.raises(ConfigError, match="CES_REGRESSION_SEVERITY must be warn or error, got 'fatal'"):
        Settings.from_env({"CES_REGRESSION_SEVERITY": "fatal"})
    with pytest.raises(ConfigError, match="CES_REGRESSION_LATENCY_PCT"):
        Settings.from_env({"CES_REGRESSION_LATENCY_PCT": "-1"})


def test_the_environment_wins_over_dotenv_and_a_process_started_reads_the_same_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        "CES_MAX_RPS=4",
        "CES_WAREHOUSE_THREADS=3",
        "CES_SERVE_MAX_ROWS=7",
        "CES_APPS=projects/p/locations/us/apps/a",
    ]
    (tmp_path / ".env").write_text("\n".join(lines))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CES_MAX_RPS", "5")
    monkeypatch.setenv("CES_ACCESS_TOKEN", "token\n")  # a secret mounted from a file
    settings = Settings.from_env()
    assert (settings.ces.max_rps, settings.ces.access_token) == (5.0, "token")
    assert (settings.storage.write_threads, settings.serve.max_rows) == (3, 7)
    assert settings.ces.apps == ("projects/p/locations/us/apps/a",)
    assert Settings.from_env(settings.environment()) == settings


def test_a_path_from_the_home_folder_is_read_as_a_shell_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/…` in `.env` (no shell expands it there) is the home folder, as DuckDB opens it: the
    folders made for a new warehouse are then the ones it is opened in, not a `~` folder here."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        "CES_WAREHOUSE=~/ces/warehouse.duckdb\nCES_LAKE=~/ces/lake\nDAGSTER_HOME=~/dh\n"
    )
    settings = Settings.from_env()
    home = tmp_path / "home"
    assert (settings.storage.warehouse, settings.storage.lake) == (
        f"{home}/ces/warehouse.duckdb",
        f"{home}/ces/lake",
    )
    assert settings.storage.report_path == f"{home}/ces/report.html"
    assert settings.orchestration.dagster_home == f"{home}/dh"
    assert settings.ces.rate_limit_file == f"{home}/dh/ces-rate-limit.state"
    assert Settings.from_env({"CES_LAKE": "s3://bucket/~x"}).storage.lake == "s3://bucket/~x"


def test_every_setting_is_in_the_reference() -> None:
    reference = (ROOT / "docs" / "configuration.md").read_text()
    groups = (CesSettings, StorageSettings, OrchestrationSettings, ServeSettings)
    variables = [variable for group in groups for variable in group.variables().values()]
    assert len(variables) == 46 and [v for v in variables if f"`{v}`" not in reference] == []


def test_a_ces_variable_no_setting_reads_is_named_with_the_setting_it_resembles() -> None:
    env = {"CES_APP": "x", "CES_MAX_RSP": "3", "CES_SOMETHING_ELSE": "1", "CES_APPS": "x", "HOME": "/"}
    assert unknown_variables(env) == [
        "CES_APP is not a setting: did you mean CES_APPS?",
        "CES_MAX_RSP is not a setting: did you mean CES_MAX_RPS?",
        "CES_SOMETHING_ELSE is not a setting (docs/configuration.md lists them)",
    ]
    assert unknown_variables({"CES_WAREHOUSE": "w.duckdb", "CES_LAKE": "lake", "DAGSTER_HOME": "/"}) == []
