"""What `pip install` gives: the wheel built from this project, installed into a fresh virtual
environment, runs the README's commands on its own files, not this checkout's (the SQL travels
as package data), and declares what they import beyond the extras the README names.

The fresh environment takes the third-party packages from this one's site-packages by a path
entry (installing them again would download hundreds of megabytes); its `.pth` files, among them
this checkout's editable finder, are not read from there."""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import Any

import anyio
import pytest
import trend_samples as samples
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
UNSHIPPED = (".git", ".venv", "build", "data", "dagster_home", "__pycache__", "*.egg-info", ".*_cache")
COMMANDS = ("ingest", "evaluate", "rebuild", "query", "report", "mcp", "simulate", "demo", "dev")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the installed `ces-pipeline`, the wheel)."""
    root = tmp_path_factory.mktemp("install")
    # A copy to build in: setuptools leaves build/ behind, whose files a later build would reuse.
    source = shutil.copytree(ROOT, root / "source", symlinks=True, ignore=shutil.ignore_patterns(*UNSHIPPED))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(root / "wheels"), str(source)], check=True, timeout=240
    )
    (wheel,) = (root / "wheels").glob("ces_pipeline-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", str(wheel)], check=True, timeout=120
    )
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
        ).strip()
    )
    (site / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv / "bin" / "ces-pipeline", wheel


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_", "PYTHON"))}
    return {**env, "DAGSTER_HOME": str(tmp / "dagster_home"), **extra}


def test_the_wheel_holds_the_sql_and_declares_the_mcp_server(installed: tuple[Path, Path]) -> None:
    _, wheel = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        requires = email.message_from_bytes(archive.read(metadata)).get_all("Requires-Dist")
    shipped = {name.removeprefix("pipelines/") for name in names if name.endswith(".sql")}
    assert shipped == {str(path.relative_to(ROOT)) for path in (ROOT / "sql").rglob("*.sql")}
    assert "pipelines/report/template.html" in names
    assert "pipelines/orchestration/dagster.yaml" in names  # what a new DAGSTER_HOME gets
    base = {
        requirement.split(">")[0].split("=")[0].split("[")[0].strip()
        for requirement in requires
        if "extra ==" not in requirement
    }
    assert {"mcp", "dagster", "duckdb", "pyarrow", "httpx"} <= base


def test_the_readme_commands_run_from_the_installed_package(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    command, _ = installed
    warehouse = samples.build_warehouse(tmp_path / "samples")[1]
    env = _env(tmp_path, CES_WAREHOUSE=warehouse.path)

    def run(*args: str) -> str:
        done = subprocess.run(
            [str(command), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{args}: {done.stderr}"
        return done.stdout

    where = subprocess.run(
        [str(command.with_name("python")), "-c", "import pipelines.sqlfiles as f; print(f.SQL_DIR)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(command.parent.parent)) and (Path(where) / "tables").is_dir()
    for name in COMMANDS:
        assert "usage: ces-pipeline" in run(name, "--help")
    assert "daily_volume" in run("query", "--list")
    rows = json.loads(run("query", "daily_volume", "--format", "json"))
    assert [row["day"] for row in rows] == [str(day) for day in samples.DAYS]
    run("report", "--out", str(tmp_path / "report.html"))
    assert "<html" in (tmp_path / "report.html").read_text()[:2000].lower()

    async def ask() -> Any:
        server = StdioServerParameters(command=str(command), args=["mcp"], env=env, cwd=str(tmp_path))
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("run_query", {"name": "daily_volume", "params": {}})

    answer = anyio.run(ask)
    assert not answer.is_error and len(answer.structured_content["rows"]) == len(samples.DAYS)
