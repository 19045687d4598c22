"""Fixtures shared across test modules."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines import stop
from scale.servers import ServerUnavailable, postgres_server

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """One PostgreSQL server for the session; each test makes the databases it needs."""
    try:
        server = postgres_server()
        conninfo = server.__enter__()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield conninfo
    finally:
        server.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def no_stop_asked() -> None:
    """No stop left asked by an earlier test that sent its process Ctrl-C, as a user does (a
    command clears it as it starts; a test running jobs without the command would inherit it)."""
    stop.requested.clear()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A user's work folder: the project's instance settings, none of its local runs."""
    (tmp_path / "dagster_home").mkdir()
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", tmp_path / "dagster_home")
    return tmp_path
