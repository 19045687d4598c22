"""The `ces-pipeline` command as a user runs it, against the simulator: its `main` with the
environment and working directory a user's shell gives it (and once as a process of its own)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import dagster as dg
import duckdb
import pytest
import trend_samples as samples
from dagster_runs import instance_at

from pipelines import __version__
from pipelines.ces.client import CesMcpClient
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.tools import get_evaluation_run
from pipelines.cli import build_parser, main
from pipelines.cli.common import console
from pipelines.cli.evaluate import regression_gate
from pipelines.cli.loads import CheckReport
from pipelines.config import CesSettings, Settings
from pipelines.ingest.evaluations import STARTED_RUNS_STATE
from pipelines.ingest.trigger import EvaluationTriggerError
from pipelines.lake.store import Lake
from pipelines.orchestration import evaluation_assets
from pipelines.orchestration.runs import RunOutcome
from pipelines.transform.schemas import ALL_TABLES
from pipelines.warehouse.duck import Warehouse

ROOT = Path(__file__).resolve().parent.parent
SCALE = SimulatorScale(
    seed=3, apps=1, days=2, conversations_per_day=6, max_turns=3, evaluation_runs_per_app=2
)


def cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`ces-pipeline ARGS` as its console script runs it (`main`, its exit code, what it wrote to
    stdout and stderr) with exactly `env` as the environment and `cwd` as the working directory,
    in this process: the command's code is the same, without a second interpreter's start."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_term = signal.getsignal(signal.SIGTERM)
    stdout, stderr = io.StringIO(), io.StringIO()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(list(args))
    finally:
        signal.signal(signal.SIGTERM, saved_term)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["ces-pipeline", *args], code, stdout.getvalue(), stderr.getvalue())


def cli_process(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`ces-pipeline ARGS` in a process of its own: what the console script starts."""
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
    )


def table_contents(path: Path) -> dict[str, list[tuple]]:
    with Warehouse(str(path)).connect(read_only=True) as conn:
        return {
            spec.name: sorted(conn.execute(f"SELECT * FROM {spec.name}").fetchall(), key=repr)
            for spec in ALL_TABLES
        }


def materialized(workdir: Path, asset: str) -> set[tuple[str, str]]:
    """The (app, day) partitions of `asset` the instance in the work folder records as loaded."""
    with instance_at(workdir / "dagster_home") as instance:
        keys = instance.get_materialized_partitions(dg.AssetKey(asset.split("/")))
    return {tuple(key.split("|")) for key in keys}  # type: ignore[misc]


def base_env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))}
    env.update(
        DAGSTER_HOME=str(workdir / "dagster_home"),
        CES_LAKE=str(workdir / "lake"),
        CES_WAREHOUSE=str(workdir / "warehouse.duckdb"),
        CES_MAX_RPS="500",
        PYTHONPATH=str(ROOT),
    )
    return env


def test_ingests_and_rebuilds_give_the_same_rows_and_query_reads_them(workdir: Path) -> None:
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        env = base_env(workdir) | {"CES_MCP_URL": sim.url, "CES_APPS": ",".join(sim.apps)}
        window = ["--since", "2026-11-01", "--until", "2026-11-03"]
        settings = workdir / "dagster_home" / "dagster.yaml"
        settings.unlink()  # a new instance folder
        first = cli("ingest", *window, env=env, cwd=workdir)
        assert first.returncode == 0, first.stderr
        assert "ingested 2 partitions in 1 run: 12 conversations loaded" in first.stderr
        # Written to a file, not a terminal: no progress bar, a line per run as it ends, whole.
        (app,) = sim.apps
        assert f"\n{app} 2026-11-01…2026-11-02: 12 conversations (2/2 partitions, 0:00:" in first.stderr
        assert f"\nevaluation runs of {app}: 2 run rows\n" in first.stderr and "━" not in first.stderr
        # A new instance folder got the project's settings, said so once, and Dagster no warning.
        assert settings.read_text() == (ROOT / "dagster_home" / "dagster.yaml").read_text()
        assert "wrote " in first.stderr and "dagster.yaml" in " ".join(first.stderr.split())
        assert "No dagster instance configuration file" not in first.stderr
        settings.write_text(settings.read_text() + "# edited\n")
        counts = Warehouse(str(workdir / "warehouse.duckdb")).row_counts()
        assert counts["conversations"] == 12 and counts["evaluation_runs"] == 2
        second = cli("ingest", *window, env=env, cwd=workdir)
        assert second.returncode == 0, second.stderr
        assert "wrote " not in second.stderr and settings.read_text().endswith("# edited\n")
        again = Warehouse(str(workdir / "warehouse.duckdb")).row_counts()
        # Conversations are settled: the same rows. Unfinished evaluation runs progressed in
        # between, so their rows are the new truth: same runs, one more snapshot each at most.
        assert {t: n for t, n in again.items() if not t.startswith("evaluation")} == {
            t: n for t, n in counts.items() if not t.startswith("evaluation")
        }
        assert again["evaluation_runs"] == counts["evaluation_runs"]
        assert (
            counts["evaluation_run_snapshots"]
            <= again["evaluation_run_snapshots"]
            <= 2 * counts["evaluation_runs"]
        )

        # Every partition loaded shows as materialized in the instance, the way the UI reads it.
        assert materialized(workdir, "warehouse/conversation_tables") == {
            (app, day) for app in sim.apps for day in ("2026-11-01", "2026-11-02")
        }
        # Any window works: partitions exist from CES_START_DATE's default on, history included;
        # an app may be named by its id alone (the app of CES_APPS it ends).
        history = cli(
            "ingest",
            "--since",
            "2025-06-01",
            "--until",
            "2025-06-03",
            "--skip-evaluations",
            "--app",
            "support-bot",
            env=env,
            cwd=workdir,
        )
        assert history.returncode == 0, history.stderr
        assert "ingested 2 partitions in 1 run: 0 conversations loaded" in history.stderr
        before = table_contents(workdir / "warehouse.duckdb")  # the quiet days listed as loaded
        early = cli("ingest", "--since", "2023-12-30", "--until", "2024-01-02", env=env, cwd=workdir)
        assert early.returncode == 2 and "Traceback" not in early.stderr
        assert "set CES_START_DATE=2023-12-30" in early.stderr
        tomorrow = datetime.now(UTC).date() + timedelta(days=1)  # --until left out: through today
        assert build_parser().parse_args(["ingest", "--since", "2026-11-01"]).until == tomorrow
        future = cli("ingest", "--since", str(tomorrow), env=env, cwd=workdir)
        assert future.returncode == 2 and f"--since {tomorrow} is after today (UTC)" in future.stderr

    shutil.rmtree(workdir / "lake" / "tables")
    (workdir / "warehouse.duckdb").unlink()
    rebuilt = cli("rebuild", env=env, cwd=workdir)  # no window: every day the raw lake holds
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "rebuilt 4 partitions in 2 runs: 12 conversations loaded" in rebuilt.stderr
    # The second fetch left the runs the first had stored final as they were: their rows, once.
    assert "evaluation runs: 2 fetches of 1 app loaded (2 run rows" in rebuilt.stderr
    assert " - dagster - " not in rebuilt.stderr + first.stderr  # the CLI's lines, not Dagster's log
    with instance_at(workdir / "dagster_home") as instance:  # the replay is a Dagster run too
        replays = instance.get_run_records(dg.RunsFilter(job_name="rebuild_evaluation_runs"))
        assert [r.dagster_run.status for r in replays] == [dg.DagsterRunStatus.SUCCESS]
    assert table_contents(workdir / "warehouse.duckdb") == before

    nothing = cli("rebuild", "--since", "2026-10-01", "--until", "2026-10-03", env=env, cwd=workdir)
    assert nothing.returncode == 0 and "nothing to rebuild: no raw conversation pages" in nothing.stderr
    # An app id stands for the lake's app of that id (nothing kept after 2026-11-02: nothing to do).
    after = cli(
        "rebuild", "--since", "2026-11-03", "--app", "support-bot", "--skip-evaluations", env=env, cwd=workdir
    )
    assert after.returncode == 0 and "(--since 2026-11-03)." in " ".join(after.stderr.split())
    for app, says in (
        ("support-bott", f"--app support-bott is the id of no app in the raw lake ({sim.apps[0]})"),
        ("projects/p/apps/a", "'projects/p/apps/a' is not an app resource name"),
    ):
        refused = cli("rebuild", *window, "--app", app, env=env, cwd=workdir)
        assert refused.returncode == 2 and says in " ".join(refused.stderr.split()), refused.stderr
    listed = cli("query", "--list", env=env, cwd=workdir)
    assert "daily_volume" in listed.stdout and "Conversations per UTC day" in listed.stdout
    volume = cli("query", "daily_volume", "--format", "json", env=env, cwd=workdir)
    rows = json.loads(volume.stdout)
    assert [(r["day"], r["conversations"]) for r in rows] == [("2026-11-01", 6), ("2026-11-02", 6)]
    as_csv = cli("query", "daily_volume", "--format", "csv", env=env, cwd=workdir)
    assert as_csv.stdout.splitlines()[0].startswith("day,conversations,live")
    unknown = cli("query", "no_such_query", env=env, cwd=workdir)
    assert unknown.returncode == 2 and "no query named 'no_such_query'" in unknown.stderr


def test_ingest_without_since_refreshes_the_days_of_the_hourly_schedule(workdir: Path) -> None:
    """No `--since` (a cron line): today and CES_LOOKBACK_DAYS before it, as the hourly schedule's
    run, reaching back to the day after the newest loaded one's lookback (an outage), never before
    CES_START_DATE."""
    today = datetime.now(UTC).date()
    scale = SimulatorScale(
        seed=5,
        apps=1,
        start_date=today - timedelta(days=3),
        days=4,
        conversations_per_day=3,
        max_turns=2,
        evaluation_runs_per_app=0,
        incident_day=None,
    )
    with running_simulator(SimulatorConfig(scale=scale)) as sim:
        env = base_env(workdir) | {"CES_MCP_URL": sim.url, "CES_APPS": sim.apps[0], "CES_LOOKBACK_DAYS": "1"}
        first = today - timedelta(days=3)
        earlier = cli(
            "ingest",
            "--skip-evaluations",
            "--since",
            str(first),
            "--until",
            str(first + timedelta(days=1)),
            env=env,
            cwd=workdir,
        )
        assert earlier.returncode == 0, earlier.stderr
        done = cli("ingest", "--skip-evaluations", env=env, cwd=workdir)
        assert done.returncode == 0, done.stderr
        said = " ".join(done.stderr.split())
        assert f"{sim.apps[0]}: catching up 2 days from {first}, its newest loaded day being {first}" in said
        assert "ingested 4 partitions in 2 runs: 12 conversations loaded" in said  # caught up apart
        loaded = {(sim.apps[0], str(first + timedelta(days=n))) for n in range(4)}
        assert materialized(workdir, "warehouse/conversation_tables") == loaded
        again = cli("ingest", "--skip-evaluations", env=env, cwd=workdir)
        assert "ingested 2 partitions in 1 run: 6 conversations loaded" in again.stderr, again.stderr
        # --quiet (cron mails what a command prints): nothing when all went well, what went wrong else
        quiet = cli("ingest", "--quiet", env=env, cwd=workdir)
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
        missing = f"{sim.apps[0]}-gone"
        failed = cli("ingest", "--quiet", "--skip-evaluations", "--app", missing, env=env, cwd=workdir)
        said = " ".join(failed.stderr.split())
        assert failed.returncode == 1 and f"NOT_FOUND: app {missing} not found" in said, said
        assert "1 of 1 runs failed" in said and "ingested" not in said
        started = env | {"CES_START_DATE": str(today)}
        done = cli("ingest", "--skip-evaluations", env=started, cwd=workdir)
        assert "ingested 1 partition in 1 run: 3 conversations loaded" in done.stderr, done.stderr
        later = cli("ingest", env=env | {"CES_START_DATE": str(today + timedelta(days=1))}, cwd=workdir)
        said = " ".join(later.stderr.split())
        assert later.returncode == 2 and f"CES_START_DATE {today + timedelta(days=1)} is after today" in said
    # The daily upkeep from cron: every run whose work a later run redid goes (the first window's,
    # two refreshes of today, the failed run), each partition's latest materialization stays, and so
    # do the runs that hold one (the catch-up's, the quiet refresh's and its evaluations', today's).
    with instance_at(workdir / "dagster_home") as instance:
        before = {record.dagster_run.run_id for record in instance.get_run_records()}
    pruned = cli("maintain", env=env | {"CES_RUN_RETENTION_DAYS": "0"}, cwd=workdir)
    said = " ".join(pruned.stderr.split())
    with instance_at(workdir / "dagster_home") as instance:
        after = {record.dagster_run.run_id for record in instance.get_run_records()}
    deleted, kept = len(before - after), len(before & after)
    assert pruned.returncode == 0 and (deleted, kept) == (4, 4), said
    assert f"{deleted} runs older than 0 days whose work later runs redid deleted, {kept} kept" in said
    assert materialized(workdir, "warehouse/conversation_tables") == loaded
    quiet = cli("maintain", "--quiet", env=env, cwd=workdir)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_ingest_fails_clearly_when_the_server_is_unreachable(workdir: Path) -> None:
    env = base_env(workdir) | {
        "CES_MCP_URL": "http://127.0.0.1:9/mcp",
        "CES_APPS": "projects/p/locations/us/apps/a",
        "CES_TIMEOUT_SECONDS": "2",
        "CES_CONNECT_TIMEOUT_SECONDS": "1",
        "CES_RETRY_BACKOFF_SECONDS": "0.05",  # retried as usual, without waiting long
    }
    result = cli("ingest", "--since", "2026-11-01", "--until", "2026-11-02", env=env, cwd=workdir)
    said = " ".join(result.stderr.split())
    assert result.returncode == 1
    assert "2026-11-01" in result.stderr and "1 of 1 runs failed" in result.stderr
    assert "list_conversations: could not connect" in said
    assert (
        "✗ evaluation runs of projects/p/locations/us/apps/a: raw__evaluation_runs: tools/list: could" in said
    )
    assert said.endswith(
        "evaluation runs: 0 fetches of 0 apps loaded (0 run rows, 0 result rows written); 1 of 1 app failed."
    )
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 10  # a few lines; the stack stays in the run
    assert (
        "ces-pipeline ingest --since 2026-11-01 --until 2026-11-02 --app projects/p/locations/us/apps/a"
        in (result.stderr.replace("\n", ""))
    )


@pytest.mark.parametrize("setting", ["CES_LAKE", "CES_WAREHOUSE", "CES_WAREHOUSE_DATA_PATH"])
def test_a_path_setting_under_a_file_is_one_line_before_any_run(workdir: Path, setting: str) -> None:
    """Where the runs would each fail after fetching their pages, with the OS's words, the
    command says which setting cannot be written, and starts none (`rebuild` and `evaluate`
    start theirs the same way)."""
    (workdir / "taken").write_text("")
    value = str(workdir / "taken" / "place")
    env = base_env(workdir) | {
        "CES_MCP_URL": "http://127.0.0.1:9/mcp",  # a run that started would say it cannot connect
        "CES_APPS": "projects/p/locations/us/apps/a",
        setting: value,
    }
    if setting == "CES_WAREHOUSE_DATA_PATH":
        env["CES_WAREHOUSE"] = f"ducklake:sqlite:{workdir / 'catalog.sqlite'}"
    done = cli("ingest", "--since", "2026-11-01", "--until", "2026-11-02", env=env, cwd=workdir)
    assert done.returncode == 2, done.stderr
    assert " ".join(done.stderr.split()) == (
        f"error: {setting}={value} cannot be written: {workdir / 'taken'} is a file, not a folder"
    )
    assert not (workdir / "dagster_home" / "storage").exists()  # no run was recorded


LIBRARY_GIVES_UP = """
import logging, sys
from pipelines.cli import main
assert main(["query", "--list"]) == 0
try:
    raise ConnectionError("Cannot connect to host storage.example:443")
except ConnectionError:
    logging.getLogger("some.storage.client").exception("_request out of retries")
try:
    raise KeyboardInterrupt
except KeyboardInterrupt:  # SQLAlchemy's pool, when Ctrl-C lands as it closes a connection
    logging.getLogger("sqlalchemy.pool.impl.NullPool").error("Exception closing connection", exc_info=True)
"""


def test_a_librarys_unhandled_warning_is_one_line_without_its_traceback(workdir: Path) -> None:
    """What a client library logs as it gives up (gcsfs does, with the traceback) before the
    command's own error says what failed; nothing of what a library logs as a stop interrupts it
    (the command's own line says it was interrupted)."""
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY_GIVES_UP],
        env=base_env(workdir),
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "error (some.storage.client): _request out of retries\n"


def test_no_command_lists_the_commands(workdir: Path) -> None:
    done = cli(env=base_env(workdir), cwd=workdir)
    said = done.stderr
    assert done.returncode == 2 and said.startswith("usage: ces-pipeline")
    assert all(f"\n    {command} " in said for command in ("ingest", "rebuild", "query", "report", "mcp"))


def test_version_names_this_version_and_the_duckdb_and_dagster_it_runs_with(workdir: Path) -> None:
    done = cli_process("--version", env=base_env(workdir), cwd=workdir)
    assert done.returncode == 0 and done.stderr == ""
    assert (
        done.stdout == f"ces-pipeline {__version__} (DuckDB {duckdb.__version__}, Dagster {dg.__version__})\n"
    )


def test_ingest_without_apps_is_a_configuration_error(workdir: Path) -> None:
    (workdir / ".env").write_text("CES_APP=projects/p/locations/us/apps/a\n")  # CES_APPS misspelt
    result = cli_process(  # the console script's own process, once
        "ingest", "--since", "2026-11-01", "--until", "2026-11-02", env=base_env(workdir), cwd=workdir
    )
    assert result.returncode == 2 and "CES_APPS is not set" in result.stderr
    assert "warning: CES_APP is not a setting: did you mean CES_APPS?" in result.stderr
    bad = cli(
        "ingest",
        "--since",
        "2026-11-01",
        "--until",
        "2026-11-02",
        env=base_env(workdir) | {"CES_APPS": "my-app"},
        cwd=workdir,
    )
    assert bad.returncode == 2 and "not an app resource name" in bad.stderr


@pytest.mark.parametrize(
    "command",
    [("query", "conversation_volume"), ("report",), ("trace", "some-conversation")],
    ids=lambda command: command[0],
)
def test_reading_before_any_load_says_to_ingest_first(workdir: Path, command: tuple[str, ...]) -> None:
    result = cli(*command, env=base_env(workdir), cwd=workdir)

    said = " ".join(result.stderr.split())
    assert result.returncode == 2, said
    assert f"error: no warehouse at {workdir / 'warehouse.duckdb'}: run `ces-pipeline ingest` first" in said
    assert "Traceback" not in said and not (workdir / "warehouse.duckdb").exists()


def test_a_library_warning_is_said_once_a_command_not_once_a_run(workdir: Path) -> None:
    """No credentials for an https endpoint: each run's client warns that its requests go out
    unauthenticated; the command (its own process: where nothing else handles a library's warning)
    says it once, then each run's failure."""
    apps = [f"projects/p/locations/us/apps/app-{n}" for n in range(3)]
    env = base_env(workdir) | {
        "CES_MCP_URL": "https://127.0.0.1:9/mcp",  # nothing listens: each run fails at once
        "CES_APPS": ",".join(apps),
        "CES_MAX_ATTEMPTS": "1",
        "GOOGLE_APPLICATION_CREDENTIALS": str(workdir / "no-such-key.json"),
    }
    result = cli_process(
        "ingest", "--since", "2026-11-01", "--until", "2026-11-02", "--skip-evaluations", env=env, cwd=workdir
    )
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    warned = [
        line for line in lines if line.startswith("warning: CES requests") and "unauthenticated" in line
    ]
    assert len(warned) == 1 and "gcloud auth application-default login" in warned[0], result.stderr
    # One reason for every run: said whole once, and each other run names the run that said it.
    (first, *others) = [line for line in lines if line.startswith("✗ ")]
    assert first.startswith(f"✗ {apps[0]} 2026-11-01: ") and "could not connect" in first
    assert others == [f"✗ {app} 2026-11-01: the same error as {apps[0]} 2026-11-01" for app in apps[1:]]
    assert "all 3 runs failed with the error above: mend it, then run again." in result.stderr
    assert "Retry one alone" not in result.stderr


def test_dev_refuses_a_ui_port_in_use_before_it_starts_anything(workdir: Path) -> None:
    """`dagster dev` would log that it cannot listen among its daemon's lines and run on without a
    UI, after the demo's load: the port is checked first."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("dev", "--ui-port", str(port), env=base_env(workdir), cwd=workdir)
    assert result.returncode == 2, result.stderr
    said = " ".join(result.stderr.split())
    assert f"cannot listen on 127.0.0.1:{port}" in said and f"ces-pipeline dev --ui-port {port + 1}" in said
    assert not (workdir / "warehouse.duckdb").exists()  # nothing started, nothing loaded


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--apps", "0"], "error: --apps must be at least 1, got 0"),
        (["--max-turns", "0"], "error: --max-turns must be at least min_turns (1), got 0"),
        (["--span-depth", "1"], "error: --span-depth must be at least 2 (root and its children), got 1"),
        (["--port", "99999"], "argument --port: expected a port number from 0 (a free one) to 65535"),
    ],
    ids=["apps", "turns", "span-depth", "port"],
)
def test_a_simulator_no_corpus_or_port_can_make_is_a_usage_error_in_the_options_words(
    options: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit code 2 and one line naming the option (a traceback of the corpus's check before),
    before anything listens."""
    try:
        code = main(["simulate", *options])
    except SystemExit as exit_:  # argparse's own refusal of an argument
        code = exit_.code
    said = " ".join(capsys.readouterr().err.split())
    assert code == 2 and says in said and "Traceback" not in said, said


@pytest.mark.parametrize("seconds", ["-1", "0", "nan", "soon"])
def test_evaluate_polls_only_every_positive_number_of_seconds(
    seconds: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wait of no time, or of none, is refused before the evaluation starts (one accepted
    `-1` and began the run)."""
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--app", "a", "--evaluations", "x", "--gate", "--poll-seconds", seconds])
    said = " ".join(capsys.readouterr().err.split())
    assert (
        exit_.value.code == 2
        and f"argument --poll-seconds: expected a positive number of seconds, got '{seconds}'" in said
    )


@pytest.mark.parametrize(
    ("variable", "cron"), [("CES_CONVERSATIONS_CRON", "61 * * * *"), ("CES_EVALUATIONS_CRON", "0 0 31 2 *")]
)
def test_a_schedule_dagster_refuses_is_a_configuration_error(variable: str, cron: str, workdir: Path) -> None:
    """A cron of five fields that Dagster refuses (a minute past 59, the 31st of February) is a
    line naming the variable, not Dagster's stack trace, before anything is fetched."""
    env = base_env(workdir) | {"CES_APPS": "projects/p/locations/us/apps/a", variable: cron}
    result = cli("ingest", "--since", str(datetime.now(UTC).date()), env=env, cwd=workdir)
    said = " ".join(result.stderr.split())
    assert result.returncode == 2 and "Traceback" not in said, said
    assert f"configuration error: {variable} must be a cron schedule of five fields" in said
    assert f"got '{cron}'" in said and not (workdir / "lake" / "raw").exists()


@pytest.mark.parametrize(
    ("window", "says"),
    [
        (["--since", "2026-13-01"], "argument --since: expected YYYY-MM-DD, got '2026-13-01'"),
        (["--since", "2026-11-03", "--until", "2026-11-01"], "--until (2026-11-01) must be after --since"),
        (["--since", "2026-11-01", "--until", "2999-01-01"], "--until 2999-01-01 is after tomorrow (UTC)"),
    ],
    ids=["no-date", "until-first", "until-far-ahead"],
)
def test_a_window_that_is_no_window_is_a_usage_error_saying_why(
    window: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit code 2 and one line, before anything is fetched or a run made."""
    app = "projects/p/locations/us/apps/a"
    try:
        code = main(["ingest", *window, "--app", app, "--skip-evaluations"])
    except SystemExit as exit_:  # argparse's own refusal of an argument
        code = exit_.code
    said = " ".join(capsys.readouterr().err.split())
    assert code == 2 and says in said and "Traceback" not in said, said


SUPPORT_BOT = "projects/sim-project/locations/us/apps/support-bot"


def test_demo_prints_row_counts_and_a_trend(workdir: Path) -> None:
    result = cli(
        "demo",
        "--apps",
        "1",
        "--days",
        "2",
        "--conversations-per-day",
        "5",
        env=base_env(workdir),
        cwd=workdir,
    )
    assert result.returncode == 0, result.stderr
    for table in ("conversations", "spans", "tool_calls", "evaluation_runs", "evaluation_run_latencies"):
        assert table in result.stdout
    assert re.search(r"│ conversations +│ 10 +│", result.stdout), result.stdout
    assert "2026-11-01" in result.stdout and "2026-11-02" in result.stdout
    # The demo's past days are fresh. The evaluation load says of its app that the newest run
    # regressed (the runs and what changed) and that results replayed conversations it has not
    # loaded (ten conversations over two days, few EVAL ones: most results name conversations CES
    # does not serve): two lines, however the console wrapped them.
    said = " ".join((result.stdout + result.stderr).split())
    assert said.count("warning") == 2, said
    assert re.search(
        rf"warning for {SUPPORT_BOT}: warehouse/evaluation_tables:no_evaluation_regressions \(WARN\): "
        r"run \S+ against \S+: \S+ pass_rate: [.0-9]+ → 0",
        said,
    )
    assert re.search(
        r"warning: warehouse/evaluation_tables:evaluation_results_plausible in 1 of 1 apps "
        r"\(\d+ found, the first: .* conversation not loaded",
        said,
    )
    # the README's headline example finds the regression the demo's newest run carries
    regressed = cli(
        "query",
        "evaluation_regressions",
        "--param",
        "app=support-bot",
        "--param",
        "status=regressed",
        "--format",
        "csv",
        env=base_env(workdir),
        cwd=workdir,
    )
    rows = list(csv.DictReader(io.StringIO(regressed.stdout)))
    assert any(row["metric"] == "pass_rate" and float(row["latest_value"]) == 0 for row in rows), rows
    failures = cli("query", "evaluation_failures", "--format", "csv", env=base_env(workdir), cwd=workdir)
    assert len(list(csv.DictReader(io.StringIO(failures.stdout)))) > 0, failures.stdout


def test_what_checks_found_is_said_once_a_run_or_summed_up() -> None:
    """A failed ERROR check is said at once with its run and what it found, and so is a warning of
    a check said each run (the regression gate: what regressed is each app's own). Other warnings,
    alike over many runs of days or apps, are counted and said once at the end, with what the
    first run they warned found: 200 apps made 200 lines of them."""
    gate, late = "warehouse/evaluation_tables:no_evaluation_regressions", "warehouse/x:fresh"
    outcomes = [
        RunOutcome(
            "app-a", True, 1, failed_checks=[f"{gate} (ERROR)"], found_by_checks={gate: "run r2 against r1"}
        ),
        RunOutcome(
            "app-b",
            True,
            1,
            failed_checks=[f"{late} (WARN)", f"{gate} (WARN)"],
            found_by_checks={late: "5 h old", gate: "run r4 against r3"},
        ),
        RunOutcome("app-c", True, 1, failed_checks=[f"{late} (WARN)"], warnings=["a step's own warning"]),
    ]
    report, said = CheckReport(each_run=[gate]), []
    for outcome in outcomes:
        report.add(outcome, said.append)
    assert said == [
        f"[red]check failed for app-a: {gate} (ERROR): run r2 against r1",
        f"[yellow]warning for app-b: {gate} (WARN): run r4 against r3",
        "[yellow]app-c: a step's own warning",
    ]
    with console.capture() as captured:
        report.say_warnings(len(outcomes), "app")
    assert " ".join(captured.get().split()) == f"warning: {late} in 2 of 3 apps (5 h old)."


def start_runs(workdir: Path) -> list[tuple[str, dict]]:
    """Each `start_evaluation_job` run of the instance in the work folder: its status, its config."""
    with instance_at(workdir / "dagster_home") as instance:
        records = instance.get_run_records(dg.RunsFilter(job_name="start_evaluation_job"), ascending=True)
    return [
        (
            record.dagster_run.status.value,
            record.dagster_run.run_config["ops"]["start_evaluation_op"]["config"],
        )
        for record in records
    ]


def test_evaluate_starts_a_run_and_loads_it(workdir: Path) -> None:
    """`evaluate` starts the evaluation with a run of `start_evaluation_job`, which records the run
    it started in the lake; then it loads the run, as the server has it, into the warehouse."""
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        env = base_env(workdir) | {"CES_MCP_URL": sim.url, "CES_APPS": ",".join(sim.apps)}
        app = sim.apps[0]
        result = cli(
            "evaluate",
            "--app",
            app,
            "--evaluations",
            "refund-happy-path,angry-customer",
            "--display-name",
            "from the CLI",
            "--poll-seconds",
            "0.05",
            env=env,
            cwd=workdir,
        )
        assert result.returncode == 0, result.stderr
        run_name = next(
            line.split()[-1] for line in result.stdout.splitlines() if line.startswith("evaluation run ")
        )
        assert run_name.startswith(f"{app}/evaluationRuns/")
        with Warehouse(str(workdir / "warehouse.duckdb")).connect(read_only=True) as conn:
            row = conn.execute(
                "SELECT display_name, operation FROM evaluation_runs WHERE evaluation_run_name = ?",
                [run_name],
            ).fetchone()
        assert row is not None and row[0] == "from the CLI"
        operation = next(
            line.split()[-1] for line in result.stdout.splitlines() if line.startswith("operation ")
        )
        assert row[1] == operation
        with CesMcpClient(CesSettings(mcp_url=sim.url)) as client:
            assert get_evaluation_run(client, run_name)["displayName"] == "from the CLI"
        (started,) = Lake(str(workdir / "lake")).read_states(STARTED_RUNS_STATE)
        assert (started["app"], started["operation"], started["evaluation_run"]) == (app, operation, run_name)
        assert start_runs(workdir) == [
            (
                "SUCCESS",
                {
                    "app": app,
                    "evaluations": ["refund-happy-path", "angry-customer"],
                    "evaluation_dataset": None,
                    "display_name": "from the CLI",
                    "app_version": None,
                    "poll_seconds": 0.05,
                },
            )
        ]

        refused = cli("evaluate", "--app", app, "--evaluations", "no-such-evaluation", env=env, cwd=workdir)
        assert refused.returncode == 1 and "refused to start the evaluation" in refused.stderr
        assert "NOT_FOUND" in refused.stderr and "get_operation" not in refused.stderr  # none started
        covered = (
            "(this app's runs in the warehouse covered: --evaluations angry-customer, refund-happy-path)"
        )
        assert " ".join(refused.stderr.split()).endswith(covered)
        assert [status for status, _ in start_runs(workdir)] == ["SUCCESS", "FAILURE"]
        assert len(Lake(str(workdir / "lake")).read_states(STARTED_RUNS_STATE)) == 1
        conflicting = cli("evaluate", "--app", app, env=env, cwd=workdir)
        assert conflicting.returncode == 2
        assert (
            " ".join(conflicting.stderr.split())
            == f"error: give exactly one of --evaluations a,b or --dataset D {covered}"
        )
        assert len(start_runs(workdir)) == 2
        gone = f"{app}/evaluationRuns/deleted-since"  # a run started here, then deleted from CES
        state = {"app": app, "operation": f"{app}/operations/gone", "evaluation_run": gone}
        Lake(str(workdir / "lake")).write_state(STARTED_RUNS_STATE, state["operation"], state)
        again = cli("evaluate", "--app", app, "--evaluations", "refund-happy-path", env=env, cwd=workdir)
        assert again.returncode == 0, again.stderr  # the run it started loads
        said = " ".join(again.stderr.split())
        assert "1 object rejected: `ces-pipeline query rejects` lists them with the reason." in said
        assert f"{app}: get_evaluation_run refused, the run is no longer followed: {gone}: NOT_FOUND" in said


def test_evaluate_names_the_operation_of_a_start_that_failed_once_it_was_named(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Starting fails after the server named the operation (its polls failed): the Dagster run
    fails, and the command says which operation to follow up rather than start another run."""
    operation = "projects/p/locations/us/operations/op-1"

    def polls_failed(*_args: object, **_kwargs: object) -> None:
        raise EvaluationTriggerError("get_operation failed: UNAVAILABLE", operation)

    monkeypatch.setattr(evaluation_assets, "start_evaluation", polls_failed)
    env = base_env(workdir) | {"CES_MCP_URL": "http://127.0.0.1:9/mcp"}
    done = cli(
        "evaluate", "--app", "projects/p/locations/us/apps/a", "--evaluations", "e", env=env, cwd=workdir
    )
    said = " ".join(done.stderr.split())
    assert done.returncode == 1 and done.stdout == "", said
    assert f"error: get_operation failed: UNAVAILABLE (operation {operation})" in said
    assert f"Follow it up with get_operation {operation}; do not re-run blindly." in said
    assert [status for status, _ in start_runs(workdir)] == ["FAILURE"]


def test_evaluate_gate_waits_for_the_run_and_exits_3_on_a_regression(workdir: Path) -> None:
    """Three runs of the same evaluations: the first has nothing to compare with; the second,
    judged with zero tolerance, regressed against the first (exit 3, what regressed listed); the
    third, judged leniently, passes against the second. The next `ingest` loads the conversations
    the regressed run made, so its failures come with the turns they happened in."""
    strict = {f"CES_REGRESSION_{name}": "0" for name in ("PASS_RATE_POINTS", "SCORE_PCT", "LATENCY_PCT")}
    lenient = {f"CES_REGRESSION_{name}": "1000" for name in ("PASS_RATE_POINTS", "SCORE_PCT", "LATENCY_PCT")}
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        env = base_env(workdir) | {"CES_MCP_URL": sim.url, "CES_APPS": ",".join(sim.apps)}
        args = ["evaluate", "--app", sim.apps[0], "--evaluations", "refund-happy-path,angry-customer"]
        args += ["--poll-seconds", "0.05", "--gate"]
        runs, said = [], []
        for extra in ({}, strict, lenient):
            result = cli(*args, env=env | extra, cwd=workdir)
            runs.append(
                next(
                    line.split()[-1]
                    for line in result.stdout.splitlines()
                    if line.startswith("evaluation run ")
                )
            )
            said.append((result.returncode, " ".join(result.stderr.split())))
            # Written to a log: a line per change of the run's state or progress, up to its end.
            followed = [line for line in result.stderr.splitlines() if line.startswith("evaluation run: ")]
            assert followed[-1].startswith("evaluation run: COMPLETED, ") and len(followed) >= 2, (
                result.stderr
            )
            assert all(line != before for before, line in pairwise(followed))
        today = datetime.now(UTC).date()
        ingested = cli("ingest", "--since", str(today), "--skip-evaluations", env=env, cwd=workdir)
        assert ingested.returncode == 0, ingested.stderr
    with Warehouse(str(workdir / "warehouse.duckdb")).connect(read_only=True) as conn:
        replayed = conn.execute(
            "SELECT conversation_name, conversation_name IN (SELECT conversation_name FROM conversations) "
            "FROM (SELECT evaluation_run_name, conversation_name FROM evaluation_turn_replays "
            "UNION SELECT evaluation_run_name, conversation_name FROM evaluation_scenario_results) "
            "WHERE evaluation_run_name IN ? AND conversation_name IS NOT NULL",
            [runs],
        ).fetchall()
        created = conn.execute(
            "SELECT min(create_time) FROM evaluation_runs WHERE evaluation_run_name IN ?", [runs]
        )
        (first_created,) = created.fetchone()
    # each result's conversation, made by its run, starting as the result began: loaded, unless
    # it began past midnight (a day not ingested yet)
    loaded = {
        name: there for name, there in replayed if name.rsplit("/", 1)[-1].startswith(f"{today:%Y%m%d}")
    }
    assert all(loaded.values()), replayed
    assert loaded or first_created.astimezone(UTC) >= datetime.combine(
        today, datetime.min.time(), UTC
    ) + timedelta(hours=23, minutes=30)
    assert (
        said[0][0] == 0
        and f"gate passed: no earlier completed run of the same evaluations as {runs[0]}" in said[0][1]
    )
    assert said[1][0] == 3 and f"regression gate failed: {runs[1]} against {runs[0]}:" in said[1][1]
    assert "golden turn latency p90_seconds:" in said[1][1] and "Traceback" not in said[1][1]
    assert "no_evaluation_regressions" not in said[1][1]  # the gate's verdict says it, once
    assert said[2][0] == 0 and f"regression gate passed: {runs[2]} is no worse than {runs[1]}" in said[2][1]
    with Warehouse(str(workdir / "warehouse.duckdb")).connect(read_only=True) as conn:
        states = conn.execute(
            "SELECT list(state ORDER BY create_time) FROM evaluation_runs WHERE evaluation_run_name IN ?",
            [runs],
        ).fetchone()[0]
    assert states == ["COMPLETED"] * 3  # each was followed to its end before it was loaded


def test_a_failed_gate_says_how_many_results_failed_and_the_query_that_says_why(tmp_path: Path) -> None:
    """The trend sample's support app: run 3 regressed against run 2, and results of it failed.
    The gate counts them and names the command that lists why each failed, which does."""
    samples.build_warehouse(tmp_path)
    env = base_env(tmp_path)
    run = f"{samples.SUPPORT}/evaluationRuns/run-3"
    with console.capture() as captured:
        code = regression_gate(Settings.from_env(env), samples.SUPPORT, run)
    said = " ".join(captured.get().split())
    assert code == 3 and f"regression gate failed: {run} against" in said, said
    count, command = re.search(r"(\d+) results? failed: ces-pipeline (.+?) \(", said).groups()
    listed = cli(*command.split(), "--format", "csv", env=env, cwd=tmp_path)
    failed = {row["evaluation_result_name"] for row in csv.DictReader(io.StringIO(listed.stdout))}
    assert listed.returncode == 0 and len(failed) == int(count) > 0, listed


def test_evaluate_gate_interrupted_says_the_run_goes_on_and_what_loads_it(workdir: Path) -> None:
    """Ctrl-C (or a CI job's timeout) while the gate follows the run: CES runs it on, and the
    command says so and what loads it, instead of a bare "interrupted"."""
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        env = base_env(workdir) | {"CES_MCP_URL": sim.url, "CES_APPS": ",".join(sim.apps)}
        args = ["evaluate", "--app", sim.apps[0], "--evaluations", "refund-happy-path", "--gate"]
        child = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", *args, "--poll-seconds", "60"],
            env=env,
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout is not None
            named = [child.stdout.readline() for _ in range(2)][-1]  # the operation, then the run
            assert named.startswith("evaluation run "), named
            child.send_signal(signal.SIGINT)
            _, stderr = child.communicate(timeout=30)
        finally:
            child.kill()
    run = named.split()[-1]
    said = " ".join(stderr.split())
    assert child.returncode == 130 and "Traceback" not in said, stderr
    assert (
        f"interrupted: {run} goes on in CES, not loaded; the next `ces-pipeline ingest` of its app loads it"
        in said
    )
